// The data layer's public surface, imported by rules as 'rc1-build/data': dataset readers
// (GSM8K, HotpotQA, StrategyQA; JSONL, JSON and Parquet), the normalized SourceItem, the
// shadow-set selection and scenario building. See each module for its contract.
export {
  DataError,
  IssueLog,
  describeValue,
  displayPath,
  formatLocation,
  type DataIssue,
  type Location,
  type LocationUnit,
  type OnError,
  type ReadOptions,
  type ReadResult,
} from './data-error.ts';
export { parseJsonl, readJsonl, toJsonl, type SourceRecord } from './jsonl.ts';
export { parseParquet, readParquet, toPlain } from './read-parquet.ts';
export {
  dataFileFormat,
  parseRecords,
  readItems,
  readRecords,
  readRecordsInto,
  type DataFileFormat,
} from './read-records.ts';
export {
  TASKS,
  compareSourceItems,
  isTask,
  sourceKey,
  type CalcCall,
  type Gsm8kItem,
  type HotpotqaItem,
  type Paragraph,
  type SourceFormat,
  type SourceItem,
  type StrategyqaItem,
  type SupportingFact,
  type Task,
} from './source-item.ts';
export { gsm8kSourceId, gsm8kSplit, parseGsm8k, parseGsm8kAnswer, readGsm8k, type Gsm8kAnswer } from './gsm8k.ts';
export { parseHotpotqa, readHotpotqa } from './hotpotqa.ts';
export { parseStrategyqa, readStrategyqa, splitList } from './strategyqa.ts';
export {
  detectTask,
  loadSources,
  mergeDuplicates,
  parseSourceRecord,
  type DuplicateRecord,
  type FileSummary,
  type LoadOptions,
  type LoadResult,
} from './load-sources.ts';
export {
  deriveSeed,
  NotEnoughDataError,
  selectShadow,
  stratifiedQuotas,
  type ShadowOptions,
  type ShadowSelection,
} from './select-shadow.ts';
export {
  buildReference,
  buildScenario,
  plainRender,
  scenarioContext,
  scenarioTools,
  shadowScenarioId,
  type ContextDoc,
  type Message,
  type Reference,
  type ReferenceStep,
  type Scenario,
  type ScenarioRender,
  type ToolName,
} from './scenario.ts';
export { issueExpected, issueField, issuePath, valueAt } from './zod-issue.ts';
export { QUESTION_KEY_DEFINITION, normalizeQuestion, questionKey } from './question-key.ts';

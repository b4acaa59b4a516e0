// RC1's sections of `rc1-build report` (declared in rc1.build.ts: report.sections): the shadow
// runs, the calibration, the difficulty histograms and the learning curves, each drawn from the
// artifact its target wrote. The engine adds the graph, the gates and the run diff itself.
import { defineReportSections } from 'rc1-build';
import { calibrationSection } from './calibration-section.ts';
import { difficultySection } from './difficulty-section.ts';
import { learningCurvesSection } from './learning-curves-section.ts';
import { shadowRunSection } from './shadow-run-section.ts';

export default defineReportSections([
  function shadowRun(ctx) {
    return shadowRunSection(ctx, 'round1');
  },
  function shadowRunPreRunCheck(ctx) {
    return shadowRunSection(ctx, 'pre_run_check');
  },
  calibrationSection,
  difficultySection,
  learningCurvesSection,
]);

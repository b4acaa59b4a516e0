// Renders a Vega-Lite spec to a standalone SVG string in Node (vega-lite compiles it to a Vega
// spec, vega's headless view draws it with the SVG renderer), so the report page needs no script
// and no network to show its charts. Charts take inline data (data.values): the loader refuses
// any URL or file, so a report never depends on what lies outside the page. vega and vega-lite
// are imported on first use: no other command pays for them.
import type { ReportItem } from '../../api/index.ts';

export type ChartItem = Extract<ReportItem, { vegaLiteSpec: unknown }>;

/** The look every chart shares unless its spec says otherwise. */
const CONFIG = {
  font: 'DejaVu Sans, Helvetica, Arial, sans-serif',
  view: { continuousWidth: 420, continuousHeight: 240, stroke: '#ccc' },
  axis: { labelFontSize: 11, titleFontSize: 12, gridColor: '#eee' },
  legend: { labelFontSize: 11, titleFontSize: 12 },
  title: { fontSize: 13, anchor: 'start' },
};

export class ChartError extends Error {}

let modules: Promise<[typeof import('vega'), typeof import('vega-lite')]> | null = null;

/**
 * The chart as SVG markup. Element ids are prefixed with `idPrefix` so that several charts on
 * one page never share a clip path or gradient id.
 */
export async function renderChart(spec: Record<string, unknown>, idPrefix: string): Promise<string> {
  modules ??= Promise.all([import('vega'), import('vega-lite')]);
  const [vega, vl] = await modules;
  let vgSpec: import('vega').Spec;
  try {
    vgSpec = vl.compile({
      ...spec,
      config: { ...CONFIG, ...(spec.config as object | undefined) },
    } as import('vega-lite').TopLevelSpec).spec;
  } catch (e) {
    throw new ChartError(`Vega-Lite cannot compile it: ${(e as Error).message}`);
  }
  const refuse = (what: string): Promise<never> =>
    Promise.reject(new ChartError(`charts take inline data (data.values); it asks to load ${what}`));
  const loader = vega.loader();
  loader.load = (uri: string) => refuse(uri);
  loader.sanitize = (uri: string) => refuse(uri);
  const warnings: string[] = [];
  const view = new vega.View(vega.parse(vgSpec), {
    renderer: 'none',
    loader,
    logger: {
      level: () => vega.Warn,
      error: (...a: unknown[]) => {
        warnings.push(a.map(String).join(' '));
        return undefined as never;
      },
      warn: (...a: unknown[]) => {
        warnings.push(a.map(String).join(' '));
        return undefined as never;
      },
      info: () => undefined as never,
      debug: () => undefined as never,
    } as unknown as import('vega').LoggerInterface,
  });
  let svg: string;
  try {
    svg = await view.toSVG();
  } catch (e) {
    throw new ChartError(`Vega cannot draw it: ${(e as Error).message}`);
  } finally {
    view.finalize();
  }
  if (warnings.length) throw new ChartError(`Vega warns: ${warnings.join('; ')}`);
  return prefixIds(svg, idPrefix);
}

/** Rewrite id="x", url(#x) and href="#x" to carry a page-unique prefix. */
export function prefixIds(svg: string, prefix: string): string {
  return svg
    .replace(/\bid="([^"]+)"/g, (_, id: string) => `id="${prefix}${id}"`)
    .replace(/url\(#([^)]+)\)/g, (_, id: string) => `url(#${prefix}${id})`)
    .replace(/href="#([^"]+)"/g, (_, id: string) => `href="#${prefix}${id}"`);
}

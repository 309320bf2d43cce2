// The console's charts, in plain SVG: bars (stacked, and side by side within a category) and
// lines (with gaps where a value is missing). Each is an image to assistive technology
// (role="img" with its aria-label, its shapes hidden), drawn at the width its container has
// (so its words stay at the page's size on a phone and a wide screen alike), with a legend in
// words; the figures themselves are for the caller to give as a table beside it. Colours come
// from the stylesheet (.tone-<name>), in light and dark.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';

/** A series of a chart: its key in the figures, its words, and its tone (a stylesheet class). */
export interface Series {
  key: string;
  label: string;
  tone: string;
  /** A line's dash, so that two lines differ by more than colour. */
  dashed?: boolean;
}

const MARGIN = { top: 12, right: 12, bottom: 34, left: 80 };
const HEIGHT = 240;
const CHAR_PX = 7;

/** The width of an element, followed as it changes. */
function useWidth(fallback: number) {
  const ref = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(fallback);
  useEffect(() => {
    const element = ref.current;
    if (!element) return;
    const read = () => setWidth(Math.max(240, Math.floor(element.clientWidth)));
    read();
    const observer = new ResizeObserver(read);
    observer.observe(element);
    return () => observer.disconnect();
  }, []);
  return { ref, width };
}

/** A label under the axis: at most this many characters ("26 Nov", "06:00"). */
const LABEL_CHARS = 6;

/**
 * The labels under the axis, given how many categories one label needs at the least so that
 * labels never touch (null: no label under that category).
 */
export type CategoryLabels = (minEvery: number) => Array<string | null>;

function Axes({
  width,
  ticks,
  y,
  tickWords,
  categories,
  x,
  band,
}: {
  width: number;
  ticks: number[];
  y(value: number): number;
  tickWords(value: number): string;
  categories: CategoryLabels;
  x(index: number): number;
  band: number;
}) {
  const labels = categories(Math.max(1, Math.ceil((LABEL_CHARS * CHAR_PX + 14) / band)));
  const bottom = HEIGHT - MARGIN.bottom;
  return (
    <g class="chart-axes">
      {ticks.map((tick) => (
        <g key={tick}>
          <line
            class={tick === 0 ? 'chart-baseline' : 'chart-grid'}
            x1={MARGIN.left}
            x2={width - MARGIN.right}
            y1={y(tick)}
            y2={y(tick)}
          />
          <text class="chart-tick" x={MARGIN.left - 6} y={y(tick)} dy="0.32em" text-anchor="end">
            {tickWords(tick)}
          </text>
        </g>
      ))}
      {labels.map((label, i) =>
        label !== null ? (
          <g key={i}>
            <line class="chart-baseline" x1={x(i)} x2={x(i)} y1={bottom} y2={bottom + 4} />
            <text class="chart-tick" x={x(i)} y={bottom + 18} text-anchor="middle">
              {label}
            </text>
          </g>
        ) : null,
      )}
    </g>
  );
}

/** A chart's plotting area: its width (followed), each category's band and centre, a value's height. */
function usePlot(count: number, ticks: number[]) {
  const { ref, width } = useWidth(800);
  const band = (width - MARGIN.left - MARGIN.right) / Math.max(1, count);
  const top = ticks[ticks.length - 1] || 1;
  return {
    ref,
    width,
    band,
    x: (i: number) => MARGIN.left + band * (i + 0.5),
    y: (v: number) => HEIGHT - MARGIN.bottom - (v / top) * (HEIGHT - MARGIN.top - MARGIN.bottom),
  };
}

/**
 * One category's marks, with its title on hover. The whole band answers to hover, so that a
 * thin bar, an empty bar or a gap in a line has a title too.
 */
function Category({
  title,
  center,
  band,
  children,
}: {
  title: string | undefined;
  center: number;
  band: number;
  children: ComponentChildren;
}) {
  return (
    <g class="chart-category">
      <title>{title}</title>
      <rect
        class="chart-hit"
        x={center - band / 2}
        y={MARGIN.top}
        width={band}
        height={HEIGHT - MARGIN.top - MARGIN.bottom}
      />
      {children}
    </g>
  );
}

/** A chart: an image with its words, its axes, and what is drawn on them. */
function PlotFrame({
  plot,
  label,
  ticks,
  tickWords,
  categories,
  children,
}: {
  plot: ReturnType<typeof usePlot>;
  label: string;
  ticks: number[];
  tickWords(value: number): string;
  categories: CategoryLabels;
  children: ComponentChildren;
}) {
  return (
    <div class="chart" ref={plot.ref}>
      <svg
        role="img"
        aria-label={label}
        width={plot.width}
        height={HEIGHT}
        viewBox={`0 0 ${plot.width} ${HEIGHT}`}
      >
        <Axes
          width={plot.width}
          ticks={ticks}
          y={plot.y}
          tickWords={tickWords}
          categories={categories}
          x={plot.x}
          band={plot.band}
        />
        {children}
      </svg>
    </div>
  );
}

/** The series' names with their swatches (a line's swatch is a short stroke of its dash). */
export function Legend({
  series,
  line,
  extra,
}: {
  series: Series[];
  line?: boolean;
  extra?: (s: Series) => ComponentChildren;
}) {
  return (
    <ul class="chart-legend">
      {series.map((s, n) => (
        <li key={s.key}>
          <svg class="swatch" width="22" height="12" viewBox="0 0 22 12" aria-hidden="true">
            {line ? (
              <>
                <line
                  class={`tone-${s.tone} chart-line`}
                  x1="1"
                  x2="21"
                  y1="6"
                  y2="6"
                  stroke-dasharray={s.dashed ? '5 3' : undefined}
                />
                {n % 2 === 0 ? (
                  <circle class={`tone-${s.tone} chart-dot`} cx="11" cy="6" r="3.5" />
                ) : (
                  <rect class={`tone-${s.tone} chart-square`} x="7" y="2" width="8" height="8" />
                )}
              </>
            ) : (
              <rect class={`tone-${s.tone}`} x="3" y="0" width="16" height="12" rx="2" />
            )}
          </svg>
          {s.label}
          {extra?.(s)}
        </li>
      ))}
    </ul>
  );
}

/**
 * Bars per category: one bar per stack, side by side, each stack's series piled from the
 * bottom (`[[created], [completed, failed, cancelled]]`: what came in beside what came of it).
 */
export function BarChart({
  label,
  count,
  categories,
  titles,
  stacks,
  values,
  ticks,
  tickWords,
}: {
  label: string;
  /** The count of categories. */
  count: number;
  /** The labels under the axis. */
  categories: CategoryLabels;
  /** Each category's figures in words, shown on hover. */
  titles: string[];
  stacks: Series[][];
  values: Array<Record<string, number>>;
  ticks: number[];
  tickWords(value: number): string;
}) {
  const plot = usePlot(count, ticks);
  const { x, y, band } = plot;
  // The bars fill 70% of their band, with a pixel between the bars of a category.
  const gap = band > 12 ? 1 : 0;
  const barWidth = Math.max(1, (band * 0.7 - gap * (stacks.length - 1)) / stacks.length);
  return (
    <PlotFrame
      plot={plot}
      label={label}
      ticks={ticks}
      tickWords={tickWords}
      categories={categories}
    >
      {values.map((row, i) => {
        const left = x(i) - (barWidth * stacks.length + gap * (stacks.length - 1)) / 2;
        return (
          <Category key={i} title={titles[i]} center={x(i)} band={band}>
            {stacks.map((stack, s) => {
              let base = 0;
              return stack.map((series) => {
                const value = row[series.key] ?? 0;
                if (value <= 0) return null;
                const from = base;
                base += value;
                return (
                  <rect
                    key={series.key}
                    class={`tone-${series.tone} chart-bar`}
                    x={left + s * (barWidth + gap)}
                    y={y(from + value)}
                    width={barWidth}
                    height={Math.max(1, y(from) - y(from + value))}
                  />
                );
              });
            })}
          </Category>
        );
      })}
    </PlotFrame>
  );
}

/** Lines across the categories; a missing value (null) leaves a gap, a lone value a dot. */
export function LineChart({
  label,
  count,
  categories,
  titles,
  series,
  values,
  ticks,
  tickWords,
}: {
  label: string;
  count: number;
  categories: CategoryLabels;
  titles: string[];
  series: Series[];
  values: Array<Record<string, number | null>>;
  ticks: number[];
  tickWords(value: number): string;
}) {
  const plot = usePlot(count, ticks);
  const { x, y, band } = plot;
  const path = (key: string) => {
    let d = '';
    let drawing = false;
    values.forEach((row, i) => {
      const value = row[key];
      if (value === null || value === undefined) {
        drawing = false;
        return;
      }
      d += `${drawing ? 'L' : 'M'}${x(i).toFixed(1)},${y(value).toFixed(1)}`;
      drawing = true;
    });
    return d;
  };
  const dots = band >= 6;
  return (
    <PlotFrame
      plot={plot}
      label={label}
      ticks={ticks}
      tickWords={tickWords}
      categories={categories}
    >
      {series.map((s) => (
        <path
          key={s.key}
          class={`tone-${s.tone} chart-line`}
          d={path(s.key)}
          stroke-dasharray={s.dashed ? '6 4' : undefined}
        />
      ))}
      {values.map((row, i) => (
        <Category key={i} title={titles[i]} center={x(i)} band={band}>
          {series.map((s, n) => {
            const value = row[s.key];
            if (value === null || value === undefined) return null;
            // A lone value (no neighbour to draw a line to) always shows as a dot.
            const lone =
              (values[i - 1]?.[s.key] ?? null) === null &&
              (values[i + 1]?.[s.key] ?? null) === null;
            if (!dots && !lone) return null;
            // The first series' marks are dots, the second's hollow squares: told apart
            // without colour, and a dot shows through a square drawn over it.
            const size = lone ? 5 : 3.5;
            return n % 2 === 0 ? (
              <circle
                key={s.key}
                class={`tone-${s.tone} chart-dot`}
                cx={x(i)}
                cy={y(value)}
                r={size}
              />
            ) : (
              <rect
                key={s.key}
                class={`tone-${s.tone} chart-square`}
                x={x(i) - size - 1}
                y={y(value) - size - 1}
                width={2 * size + 2}
                height={2 * size + 2}
              />
            );
          })}
        </Category>
      ))}
    </PlotFrame>
  );
}

/** A small bar in a table's cell, its length the share of the largest (the figure is beside it). */
export function CellBar({ share, tone }: { share: number; tone: string }) {
  const width = Math.max(0, Math.min(1, share)) * 100;
  return (
    <svg
      class="cell-bar"
      viewBox="0 0 100 8"
      preserveAspectRatio="none"
      aria-hidden="true"
      focusable="false"
    >
      <rect class="cell-bar-track" x="0" y="0" width="100" height="8" rx="2" />
      {width > 0 && (
        <rect class={`tone-${tone}`} x="0" y="0" width={Math.max(1, width)} height="8" rx="2" />
      )}
    </svg>
  );
}

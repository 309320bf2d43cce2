// Resident memory (VmRSS) of the API process across the run. Two views:
// - a reading after each phase, as asked;
// - a reading every 250 ms, grouped by phase. Under load a V8 heap saws up and down by a
//   fifth or more between major collections, so one reading can land on a peak or a trough;
//   the median of a phase does not. The check compares the median of every later phase with
//   the median of the first measured phase after the warm-up: a leak lifts them all. Only
//   phases that load the API are sampled: an idle API keeps whatever size its last load left.
import { rssMiB } from './processes.js';
import { maximum, percentile, round } from './stats.js';

export interface MemorySample {
  label: string;
  rssMiB: number;
}

export interface PhaseMemory {
  phase: string;
  samples: number;
  medianMiB: number;
  maxMiB: number;
}

export class MemoryTracker {
  /** The readings after each phase. */
  readonly samples: MemorySample[] = [];
  private readonly byPhase = new Map<string, number[]>();
  private phase: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private baselinePhase: string | undefined;

  constructor(private readonly pid: number) {}

  /** Takes a reading "after" something (kept in the list of readings). */
  sample(label: string): number {
    const value = round(rssMiB(this.pid), 1);
    this.samples.push({ label, rssMiB: value });
    return value;
  }

  /** From now on, periodic readings belong to this phase (none: stop sampling). */
  enterPhase(phase: string | undefined): void {
    this.phase = phase;
    if (phase && !this.byPhase.has(phase)) this.byPhase.set(phase, []);
    if (phase && !this.timer) {
      this.timer = setInterval(() => {
        try {
          if (this.phase) this.byPhase.get(this.phase)!.push(rssMiB(this.pid));
        } catch {
          // the API is gone (the bench is failing); the phase reports what it has
        }
      }, 250);
      this.timer.unref();
    }
    if (!phase && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  /** The phase every later one is compared with (the first measured one after warm-up). */
  setBaseline(phase: string): void {
    this.baselinePhase = phase;
  }

  phases(): PhaseMemory[] {
    return [...this.byPhase]
      .filter(([, values]) => values.length > 0)
      .map(([phase, values]) => ({
        phase,
        samples: values.length,
        medianMiB: round(percentile(values, 50), 1),
        maxMiB: round(maximum(values), 1),
      }));
  }

  get baseline(): PhaseMemory | undefined {
    return this.phases().find((p) => p.phase === this.baselinePhase);
  }

  /** The later phase with the highest median. */
  get highestLater(): PhaseMemory | undefined {
    const all = this.phases();
    const index = all.findIndex((p) => p.phase === this.baselinePhase);
    if (index < 0) return undefined;
    return all
      .slice(index + 1)
      .reduce<PhaseMemory | undefined>(
        (a, b) => (!a || b.medianMiB > a.medianMiB ? b : a),
        undefined,
      );
  }

  /** (highest later phase median) / (baseline phase median) - 1. */
  get growth(): number {
    const base = this.baseline;
    const later = this.highestLater;
    return base && later ? round(later.medianMiB / base.medianMiB - 1, 3) : Number.NaN;
  }
}

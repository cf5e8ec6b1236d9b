import type { SeedProgress } from './context.ts';

const WIDTH = 24;

const rate = (done: number, ms: number): string => (ms > 0 ? Math.round((done * 1000) / ms).toLocaleString('en') : '-');

/**
 * The seed's progress on a stream (stderr): per phase done/total, percent and rate per second.
 * On a terminal one line redrawn in place; otherwise (a log file, CI) a line every few seconds.
 */
export class ProgressBar implements SeedProgress {
  private phase = '';
  private total = 0;
  private done = 0;
  private started = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly out: NodeJS.WriteStream,
    private readonly everyMs = out.isTTY ? 200 : 3000,
  ) {}

  begin(phase: string, total: number): void {
    this.phase = phase;
    this.total = total;
    this.done = 0;
    this.started = performance.now();
    this.timer = setInterval(() => this.draw(false), this.everyMs);
    this.timer.unref();
    if (this.out.isTTY) this.draw(false);
  }

  advance(count: number): void {
    this.done += count;
  }

  end(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.draw(true);
  }

  private draw(final: boolean): void {
    const ms = performance.now() - this.started;
    const share = this.total > 0 ? this.done / this.total : 1;
    const counts = `${this.done.toLocaleString('en')}/${this.total.toLocaleString('en')}`;
    const text = `${this.phase.padEnd(10)} ${counts.padStart(17)} ${(share * 100).toFixed(1).padStart(5)}% ${rate(this.done, ms).padStart(8)}/s`;
    if (this.out.isTTY) {
      const filled = Math.round(share * WIDTH);
      const bar = `[${'#'.repeat(filled)}${'-'.repeat(WIDTH - filled)}]`;
      this.out.write(`\r\x1b[K${this.phase.padEnd(10)} ${bar} ${text.slice(11)}${final ? `  ${(ms / 1000).toFixed(1)} s\n` : ''}`);
    } else {
      this.out.write(`${text}${final ? `  ${(ms / 1000).toFixed(1)} s done` : ''}\n`);
    }
  }
}

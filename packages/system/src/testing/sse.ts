import { request, type ClientRequest, type IncomingHttpHeaders } from 'node:http';

/** One Server-Sent Event as a client sees it (comments are counted, not kept). */
export interface SseEvent {
  id: string | null;
  event: string;
  data: string;
}

/**
 * A minimal EventSource over a real socket (tests and the live benchmark): it keeps every event,
 * counts heartbeat comments, and lets a test wait for the next event or close the connection.
 */
export class SseClient {
  readonly events: SseEvent[] = [];
  comments = 0;
  closed = false;
  #buffer = '';
  #waiters: (() => void)[] = [];
  /** Called with each event as it arrives (benchmarks time them). */
  onEvent: ((event: SseEvent) => void) | null = null;

  private constructor(
    readonly status: number,
    readonly headers: IncomingHttpHeaders,
    readonly body: string,
    private readonly req: ClientRequest,
  ) {}

  /** Opens the stream; resolves once the response's head (or a whole error body) arrived. */
  static open(url: string, headers: Record<string, string> = {}): Promise<SseClient> {
    return new Promise((resolve, reject) => {
      const req = request(url, { headers: { accept: 'text/event-stream', ...headers }, agent: false });
      req.on('error', reject);
      req.on('response', (res) => {
        res.setEncoding('utf8');
        if (res.statusCode !== 200) {
          let text = '';
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => resolve(new SseClient(res.statusCode ?? 0, res.headers, text, req)));
          return;
        }
        const client = new SseClient(200, res.headers, '', req);
        res.on('data', (chunk: string) => client.#feed(chunk));
        const ended = () => {
          client.closed = true;
          client.#wake();
        };
        res.on('end', ended);
        res.on('close', ended);
        resolve(client);
      });
      req.end();
    });
  }

  #feed(chunk: string): void {
    this.#buffer += chunk;
    let cut: number;
    while ((cut = this.#buffer.indexOf('\n\n')) >= 0) {
      const block = this.#buffer.slice(0, cut);
      this.#buffer = this.#buffer.slice(cut + 2);
      const event: SseEvent = { id: null, event: 'message', data: '' };
      let isEvent = false;
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) this.comments++;
        else if (line.startsWith('id: ')) event.id = line.slice(4);
        else if (line.startsWith('event: ')) event.event = line.slice(7);
        else if (line.startsWith('data: ')) {
          event.data = line.slice(6);
          isEvent = true;
        }
      }
      if (isEvent) {
        this.events.push(event);
        this.onEvent?.(event);
      }
    }
    this.#wake();
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const w of waiters) w();
  }

  /** Waits until `count` events arrived (or the stream ended, or the time is up: then it throws). */
  async waitForEvents(count: number, timeoutMs = 3000): Promise<SseEvent[]> {
    const until = Date.now() + timeoutMs;
    while (this.events.length < count) {
      if (this.closed) throw new Error(`stream ended after ${this.events.length} events, ${count} expected`);
      const left = until - Date.now();
      if (left <= 0) throw new Error(`${this.events.length} events after ${timeoutMs} ms, ${count} expected`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.events;
  }

  /** Waits until the server ends the stream. */
  async waitForEnd(timeoutMs = 3000): Promise<void> {
    const until = Date.now() + timeoutMs;
    while (!this.closed) {
      if (Date.now() > until) throw new Error('the stream is still open');
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  /** The last event's data, parsed. */
  last<T = Record<string, unknown>>(): T {
    const event = this.events.at(-1);
    if (!event) throw new Error('no event yet');
    return JSON.parse(event.data) as T;
  }

  close(): void {
    this.req.destroy();
  }
}

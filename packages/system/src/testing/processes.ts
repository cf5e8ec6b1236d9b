import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { expect } from 'vitest';

/** Test helper: a TCP port on loopback that nothing listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** Test helper: true while a process with this pid exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Test helper: kills a child process with SIGKILL, waits for its exit and checks that it is gone. */
export async function killHard(child: ChildProcess): Promise<void> {
  const exited = once(child, 'exit');
  expect(child.kill('SIGKILL')).toBe(true);
  const [code, signal] = (await exited) as [number | null, string | null];
  expect([code, signal]).toEqual([null, 'SIGKILL']);
  expect(alive(child.pid!)).toBe(false);
}

/** Test helper, for afterAll: stops (SIGTERM) every child still running and checks that none is left. */
export async function stopAll(children: readonly ChildProcess[]): Promise<void> {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      // A process a test stopped (SIGSTOP) gets the SIGTERM only once it runs again.
      child.kill('SIGCONT');
      await exited;
    }
    expect(alive(child.pid!), `process ${child.pid} is still running`).toBe(false);
  }
}

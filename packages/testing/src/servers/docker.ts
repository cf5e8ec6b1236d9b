import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * Whether a Docker engine looks reachable, decided in at most ~1 s: DOCKER_HOST (a unix socket
 * that exists, or a TCP endpoint that accepts a connection) or one of the usual sockets. This runs
 * before testcontainers is even loaded, because its own runtime probe can take long to give up on
 * a machine without Docker. Returns null when reachable, else the reason.
 */
export async function dockerUnavailable(): Promise<string | null> {
  const host = process.env.DOCKER_HOST;
  if (host) {
    if (host.startsWith('unix://')) return existsSync(host.slice('unix://'.length)) ? null : `DOCKER_HOST socket ${host} does not exist`;
    const url = new URL(host.replace(/^tcp:/, 'http:'));
    return (await accepts(url.hostname, Number(url.port || 2375))) ? null : `DOCKER_HOST ${host} does not answer`;
  }
  const sockets = ['/var/run/docker.sock', join(homedir(), '.docker/run/docker.sock'), process.env.XDG_RUNTIME_DIR ? join(process.env.XDG_RUNTIME_DIR, 'docker.sock') : ''];
  return sockets.some((s) => s && existsSync(s)) ? null : 'no Docker engine (no docker socket, DOCKER_HOST unset)';
}

function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, host);
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => done(true));
  });
}

/** Rejects when `promise` takes longer than `ms`, naming `what`. */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms / 1000} s`)), ms);
    }),
  ]);
}

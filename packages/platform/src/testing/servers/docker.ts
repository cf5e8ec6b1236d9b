import { existsSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * Whether a Docker engine answers, decided in about a second at most: DOCKER_HOST (a unix socket
 * or a TCP endpoint) or one of the usual sockets must answer `GET /_ping`. This runs before
 * testcontainers is even loaded, because its own runtime probe can take long to give up on a
 * machine without Docker. Returns null when an engine answers, else the reason.
 */
export async function dockerUnavailable(): Promise<string | null> {
  const host = process.env.DOCKER_HOST;
  if (host) {
    if (host.startsWith('unix://')) {
      const path = host.slice('unix://'.length);
      if (!existsSync(path)) return `DOCKER_HOST socket ${path} does not exist`;
      return (await pings({ socketPath: path })) ? null : `the Docker engine at ${host} does not answer`;
    }
    // A TLS endpoint needs client certificates to answer; testcontainers has them, this probe does not.
    if (process.env.DOCKER_TLS_VERIFY) return null;
    const url = new URL(host.replace(/^tcp:/, 'http:'));
    return (await pings({ host: url.hostname, port: Number(url.port || 2375) })) ? null : `the Docker engine at ${host} does not answer`;
  }
  const sockets = ['/var/run/docker.sock', join(homedir(), '.docker/run/docker.sock'), process.env.XDG_RUNTIME_DIR ? join(process.env.XDG_RUNTIME_DIR, 'docker.sock') : ''].filter((s) => s && existsSync(s));
  if (sockets.length === 0) return 'no Docker engine (no docker socket, DOCKER_HOST unset)';
  for (const socketPath of sockets) if (await pings({ socketPath })) return null;
  return `no Docker engine answers on ${sockets.join(', ')}`;
}

/** The engine API's health check, `GET /_ping` answering 200, within one second. */
function pings(target: { socketPath: string } | { host: string; port: number }): Promise<boolean> {
  return new Promise((resolve) => {
    const request = httpRequest({ ...target, path: '/_ping', method: 'GET', timeout: 1_000 }, (response) => {
      response.resume();
      resolve(response.statusCode === 200);
    });
    request.once('timeout', () => request.destroy());
    request.once('error', () => resolve(false));
    request.end();
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

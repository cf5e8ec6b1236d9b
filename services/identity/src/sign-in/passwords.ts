import { hash, verify } from '@node-rs/argon2';

// Algorithm.Argon2id of @node-rs/argon2 (a const enum, which isolated modules cannot import).
const ARGON2ID = 2;

/** Hashes and checks passwords; argon2id with OWASP's minimum parameters by default. */
export interface PasswordHasher {
  hash(password: string): Promise<string>;
  verify(hash: string, password: string): Promise<boolean>;
}

export function argon2idHasher(options: { memoryCost?: number; timeCost?: number } = {}): PasswordHasher {
  const params = { algorithm: ARGON2ID, memoryCost: options.memoryCost ?? 19_456, timeCost: options.timeCost ?? 2, parallelism: 1 };
  return {
    hash: (password) => hash(password, params),
    verify: async (stored, password) => {
      try {
        return await verify(stored, password);
      } catch {
        return false;
      }
    },
  };
}

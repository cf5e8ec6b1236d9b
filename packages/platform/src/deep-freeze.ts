/**
 * Freezes plain data (objects and arrays, as JSON.parse makes them) and everything it holds, and
 * returns it: shared read-model documents and folded stream states, so code that would change
 * one in place for every other holder fails at once instead. An object found frozen already is
 * taken as frozen throughout (whatever is frozen here is frozen deeply), which also ends the walk
 * on parts shared with an earlier frozen version.
 */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

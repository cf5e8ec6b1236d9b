import type { Projection } from '@castie/platform';
import { groupsProjection } from './groups/groups-projection.ts';
import { friendshipsProjection } from './people/friendships-projection.ts';
import { peopleProjection } from './people/people-projection.ts';

/**
 * Reference data that several services keep their own copy of (ARCHITECTURE rule 2): one code,
 * many small copies, each fed by events into the service's own document store.
 */
export * from './people/people.ts';
export * from './people/people-projection.ts';
export * from './people/friendships-projection.ts';
export * from './groups/groups-projection.ts';
export * from './groups/group-directory.ts';

/** The projections a service runs to keep its copy of people and friendships. */
export const peopleProjections = (): Projection[] => [peopleProjection(), friendshipsProjection()];

/** The projections a service runs to keep its copy of groups (run peopleProjections on the same store too). */
export const groupsProjections = (): Projection[] => [groupsProjection()];

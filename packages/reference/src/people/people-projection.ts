import { CASTIES_TOPIC, GROUPS_TOPIC, IDENTITY_TOPIC, type CastieEvent, type GroupEvent, type IdentityEvent } from '@castie/contracts';
import { collectionSpec, insertSeeds, updateOnce, type Doc, type Projection, type Update } from '@castie/platform';

/** One person as the services that show people know them. */
export interface PersonDoc extends Doc {
  handle: string;
  handleLower: string;
  firstName: string;
  lastName: string;
  lastNameLower: string;
  city: string;
  state: string;
  profPic: string;
  imageUpdatedAt: string | null;
  isPrivate: boolean;
  /** Only `active` people are shown; `deleted` ones answer inactive_user. */
  status: 'signing-up' | 'active' | 'deleted' | 'abandoned';
  /** Slugs of the groups the person follows (access granted or public). */
  following: string[];
  castiesCreated: number;
  forecasts: number;
  xp: number;
  /** Forecasts on answered Casties, and how many of them were correct. */
  answered: number;
  correct: number;
}

/**
 * Indexes: handles (any case); active people in last-name order (people search pages). The
 * leaderboards are sorted sets of their own (casties service).
 */
export const PEOPLE = collectionSpec<PersonDoc>({
  name: 'people',
  arrays: ['following'],
  indexes: [{ keys: { handleLower: 1 } }, { keys: { status: 1, lastNameLower: 1, handleLower: 1, _id: 1 } }],
});

type Fields = Omit<PersonDoc, keyof Doc>;
const blank: Fields = { handle: '', handleLower: '', firstName: '', lastName: '', lastNameLower: '', city: '', state: '', profPic: '', imageUpdatedAt: null, isPrivate: false, status: 'signing-up', following: [], castiesCreated: 0, forecasts: 0, xp: 0, answered: 0, correct: 0 };

/**
 * Builds `people` from identity (who they are), groups (what they follow) and casties (what they
 * created, forecast and scored). Counters are guarded per document by updateOnce, so a
 * redelivered event counts once.
 */
export function peopleProjection(): Projection {
  // New documents get every field, whichever topic mentions the person first.
  const seed = insertSeeds(blank);

  return {
    name: 'people',
    version: 1,
    topics: [IDENTITY_TOPIC, GROUPS_TOPIC, CASTIES_TOPIC],
    collections: [PEOPLE],
    async apply(event, _envelope, record, unit) {
      const people = unit.collection(PEOPLE);
      const set = async (userId: string, fields: Partial<Fields>) => updateOnce(people, userId, record, { $set: fields, $setOnInsert: seed(Object.keys(fields)) });
      const inc = async (userId: string, fields: NonNullable<Update<PersonDoc>['$inc']>) => updateOnce(people, userId, record, { $inc: fields, $setOnInsert: seed(Object.keys(fields)) });

      if (record.topic === IDENTITY_TOPIC) {
        const e = event as IdentityEvent;
        switch (e.type) {
          case 'AccountOpened':
            return void (await set(e.data.userId, { status: 'signing-up' }));
          case 'ProfileNamed':
            return void (await set(e.data.userId, { handle: e.data.handle, handleLower: e.data.handle.toLowerCase(), firstName: e.data.firstName, lastName: e.data.lastName, lastNameLower: e.data.lastName.toLowerCase() }));
          case 'SignUpCompleted':
            return void (await set(e.data.userId, { status: 'active', profPic: e.data.profPic }));
          case 'ProfileEdited': {
            const { userId, ...changes } = e.data;
            const fields: Partial<Fields> = { ...changes };
            if (changes.handle !== undefined) fields.handleLower = changes.handle.toLowerCase();
            if (changes.lastName !== undefined) fields.lastNameLower = changes.lastName.toLowerCase();
            return void (await set(userId, fields));
          }
          case 'ProfilePictureChanged':
            return void (await set(e.data.userId, { profPic: e.data.profPic, imageUpdatedAt: e.data.changedAt }));
          case 'PrivacyChanged':
            return void (await set(e.data.userId, { isPrivate: e.data.isPrivate }));
          case 'AccountDeleted':
            return void (await set(e.data.userId, { status: 'deleted' }));
          case 'SignUpAbandoned':
            return void (await set(e.data.userId, { status: 'abandoned' }));
          default: {
            const unknown: never = e;
            throw new Error(`unhandled ${JSON.stringify(unknown)}`);
          }
        }
      }

      if (record.topic === GROUPS_TOPIC) {
        const e = event as GroupEvent;
        if (e.type === 'GroupFollowed' || e.type === 'GroupAccessGranted') {
          await updateOnce(people, e.data.userId, record, { $addToSet: { following: e.data.slug }, $setOnInsert: seed(['following']) });
        } else if (e.type === 'GroupUnfollowed' || e.type === 'GroupAccessDenied') {
          await updateOnce(people, e.data.userId, record, { $pull: { following: e.data.slug }, $setOnInsert: seed(['following']) });
        }
        return;
      }

      if (record.topic === CASTIES_TOPIC) {
        const e = event as CastieEvent;
        if (e.type === 'CastieCreated') await inc(e.data.creatorId, { castiesCreated: 1 });
        else if (e.type === 'ForecastPlaced') await inc(e.data.userId, { forecasts: 1 });
        else if (e.type === 'CastieAnswered' || e.type === 'ForecastsScored') {
          for (const score of e.data.scores) await inc(score.userId, { xp: score.points, answered: 1, correct: score.correct ? 1 : 0 });
        }
      }
    },
  };
}

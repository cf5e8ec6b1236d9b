import { z } from 'zod';
import { endpoint, ok } from './endpoint.ts';
import { formInt, line, textLimits } from './form.ts';
import { instantPageQuery, listPageInfo, listPageQuery } from './paging.ts';
import { FrodadSchema, HandleParams, ListFriendStatusSchema, profileResponse } from './people.ts';

/** Limits of the social service (decisions.md: lists have bounded size). */
export const socialRules = {
  searchDefault: 100,
  searchMax: 500,
  /** Words of a people search that must all match; more are ignored. */
  searchWordsMax: 5,
} as const;

/** One entry of GET /api/frodad-requests/ (spec: handle, firstName, lastName). */
export const FrodadRequestEntrySchema = z.object({ handle: z.string(), firstName: z.string(), lastName: z.string() }).meta({ id: 'FrodadRequest' });

/** One people-search entry: snake_case names and no level (spec: Frodad object, people search). */
export const PeopleSearchEntrySchema = z.object({ first_name: z.string(), last_name: z.string(), friend_status: ListFriendStatusSchema, handle: z.string() }).meta({ id: 'PeopleSearchEntry' });

/** Answers that are only a message (spec: Friends). */
const message = ok({ message: z.string() });

export const socialApi = {
  addFrodad: endpoint({
    method: 'POST',
    paths: ['/api/add-frodad/:handle/'],
    service: 'social',
    access: 'user',
    params: HandleParams,
    response: message,
  }),
  frodadRequests: endpoint({
    method: 'GET',
    paths: ['/api/frodad-requests/'],
    service: 'social',
    access: 'user',
    query: z.object({ ...instantPageQuery }),
    response: ok({
      number_received: z.number().int(),
      /** Newest first; null when none (spec). */
      requests_received: z.array(FrodadRequestEntrySchema).nullable(),
      number_sent: z.number().int(),
      requests_sent: z.array(FrodadRequestEntrySchema).nullable(),
      ...listPageInfo,
    }),
  }),
  respondToFrodadRequest: endpoint({
    method: 'POST',
    paths: ['/api/frodad-requests/:handle/:action/'],
    service: 'social',
    access: 'user',
    // An action other than accept or reject is an improper response (decisions.md).
    invalidAs: 'improper_frodad_response',
    params: HandleParams.extend({ action: z.enum(['accept', 'reject'], { error: 'must be accept or reject' }) }),
    response: message,
  }),
  unfrodad: endpoint({
    method: 'POST',
    paths: ['/api/unfrodad/:handle/'],
    service: 'social',
    access: 'user',
    params: HandleParams,
    response: message,
  }),
  searchPeople: endpoint({
    method: 'GET',
    paths: ['/api/search/people/'],
    service: 'social',
    access: 'user',
    query: z.object({
      q: line(textLimits.searchQuery),
      limit: formInt.pipe(z.number().min(1, 'must be at least 1').max(socialRules.searchMax, `must be at most ${socialRules.searchMax}`)).default(socialRules.searchDefault),
      /** `next_before` of the previous page: the page goes on after it. */
      before: z.string().optional(),
    }),
    response: ok({
      /** Ordered by last name (then handle). */
      search_results: z.array(PeopleSearchEntrySchema),
      has_more: z.boolean(),
      next_before: z.string().nullable(),
    }),
  }),
  profileFrodads: endpoint({
    method: 'GET',
    paths: ['/api/profile/:handle/frodads/'],
    service: 'social',
    access: 'user',
    params: HandleParams,
    query: z.object({ ...listPageQuery }),
    response: profileResponse('myFrodads', z.record(z.string(), FrodadSchema)).extend(listPageInfo),
  }),
} as const;

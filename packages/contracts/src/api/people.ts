import { z } from 'zod';
import { ok } from './endpoint.ts';

/** friend_status as profileInfo shows it (relative to the requester). */
export const FriendStatusSchema = z.enum(['self', 'friend', 'pending', 'respond', 'not-friends']).meta({ id: 'FriendStatus' });
/** friend_status as Frodad listings show it: `friends`, not `friend` (spec). */
export const ListFriendStatusSchema = z.enum(['self', 'friends', 'pending', 'respond', 'not-friends']).meta({ id: 'ListFriendStatus' });
export type FriendStatus = z.infer<typeof FriendStatusSchema>;

/** The Profile object (spec: Resources). */
export const ProfileInfoSchema = z.object({
  handle: z.string(),
  user_uuid: z.string(),
  firstName: z.string(),
  lastName: z.string(),
  city: z.string(),
  state: z.string(),
  profPic: z.string(),
  image_last_updated_date: z.string().nullable(),
  image_last_updated_time: z.string().nullable(),
  level: z.number().int(),
  adjective: z.string(),
  noun: z.string(),
  is_private: z.boolean(),
  percentCorrect: z.number(),
  myCastiesNumber: z.number().int(),
  groupsNumber: z.number().int(),
  frodadsNumber: z.number().int(),
  forecastsNumber: z.number().int(),
  friend_status: FriendStatusSchema,
}).meta({ id: 'Profile', description: 'The Profile object.' });
export type ProfileInfo = z.infer<typeof ProfileInfoSchema>;

/** A Frodad object (user listing entry); `level` is omitted in some listings (group followers). */
export const FrodadSchema = z.object({
  handle: z.string(),
  lastName: z.string(),
  firstName: z.string(),
  profPic: z.string(),
  friend_status: ListFriendStatusSchema,
  level: z.number().int().optional(),
}).meta({ id: 'Frodad', description: 'A Frodad object (user listing entry); level is omitted in some listings.' });
export type Frodad = z.infer<typeof FrodadSchema>;

/** The four profile endpoints: profileInfo plus one subsection, or the string `private`. */
export const profileResponse = <K extends string, S extends z.ZodType>(key: K, subsection: S) =>
  ok({ profileInfo: ProfileInfoSchema }).extend({ [key]: z.union([subsection, z.literal('private')]) } as { [P in K]: z.ZodUnion<[S, z.ZodLiteral<'private'>]> });

/** Path parameter of the profile endpoints. */
export const HandleParams = z.object({ handle: z.string().min(1) });

/**
 * The words the seeded history is made of: names, places, group topics, questions, comments.
 * Small lists combined by the PRNG; enough variety for feeds, search and profiles to look lived in.
 */

export const FIRST_NAMES = [
  'Ada', 'Alan', 'Amara', 'Ben', 'Carla', 'Chen', 'Dana', 'Diego', 'Elena', 'Emeka', 'Farah', 'Felix', 'Grace', 'Hana', 'Ivan',
  'Jamal', 'Julia', 'Kenji', 'Lena', 'Liam', 'Maya', 'Mateo', 'Nia', 'Noah', 'Olga', 'Omar', 'Priya', 'Quinn', 'Rosa', 'Sam',
  'Sofia', 'Tariq', 'Uma', 'Victor', 'Wendy', 'Xavier', 'Yara', 'Yusuf', 'Zoe', 'Zane',
] as const;

export const LAST_NAMES = [
  'Adams', 'Baker', 'Costa', 'Dubois', 'Evans', 'Fischer', 'Garcia', 'Hughes', 'Ibrahim', 'Jensen', 'Kim', 'Lopez', 'Moreau',
  'Nakamura', 'Okafor', 'Patel', 'Quintero', 'Rossi', 'Schmidt', 'Tanaka', 'Usman', 'Varga', 'Walsh', 'Xu', 'Young', 'Zhang',
  'Lovelace', 'Turing', 'Hopper', 'Noether', 'Curie', 'Banda', 'Silva', 'Novak', 'Larsen', 'Mensah',
] as const;

export const PLACES: readonly { city: string; state: string }[] = [
  { city: 'Austin', state: 'TX' }, { city: 'Boston', state: 'MA' }, { city: 'Chicago', state: 'IL' }, { city: 'Denver', state: 'CO' },
  { city: 'Seattle', state: 'WA' }, { city: 'Portland', state: 'OR' }, { city: 'Miami', state: 'FL' }, { city: 'Atlanta', state: 'GA' },
  { city: 'Phoenix', state: 'AZ' }, { city: 'Nashville', state: 'TN' }, { city: 'Brooklyn', state: 'NY' }, { city: 'Oakland', state: 'CA' },
  { city: 'San Diego', state: 'CA' }, { city: 'Minneapolis', state: 'MN' }, { city: 'Detroit', state: 'MI' }, { city: 'Raleigh', state: 'NC' },
  { city: 'Salt Lake City', state: 'UT' }, { city: 'Madison', state: 'WI' }, { city: 'Pittsburgh', state: 'PA' }, { city: 'New Orleans', state: 'LA' },
];

/** A group's subject: what its Casties ask about. */
export interface Topic {
  name: string;
  info: string;
  /** Things that can happen: "Will <subject> <happening>?". */
  subjects: readonly string[];
  happenings: readonly string[];
}

export const TOPICS: readonly Topic[] = [
  { name: 'Premier League', info: 'Football in England, every matchday.', subjects: ['Arsenal', 'Liverpool', 'Chelsea', 'Man City', 'Tottenham', 'Newcastle', 'Aston Villa'], happenings: ['win the league', 'sack their manager', 'win the next derby', 'sign a new striker', 'finish in the top four'] },
  { name: 'NBA Talk', info: 'Basketball predictions and trade rumours.', subjects: ['the Celtics', 'the Lakers', 'the Nuggets', 'the Knicks', 'the Warriors', 'the Bucks'], happenings: ['win the title', 'make the playoffs', 'trade their star', 'win ten in a row', 'top their conference'] },
  { name: 'Formula 1', info: 'Race weekends, strategy calls and silly season.', subjects: ['Verstappen', 'Hamilton', 'Leclerc', 'Norris', 'Alonso', 'Piastri'], happenings: ['win the next race', 'take pole position', 'change teams', 'finish on the podium', 'win the championship'] },
  { name: 'Tennis Majors', info: 'Grand slams and the tour.', subjects: ['Alcaraz', 'Sinner', 'Djokovic', 'Swiatek', 'Sabalenka', 'Gauff'], happenings: ['win the next slam', 'reach the final', 'end the year as number one', 'retire this year', 'win in straight sets'] },
  { name: 'World Politics', info: 'Elections, summits and treaties around the world.', subjects: ['the UN', 'the EU', 'the G7', 'NATO', 'the African Union', 'ASEAN'], happenings: ['agree on a new treaty', 'hold an emergency summit', 'admit a new member', 'announce sanctions', 'issue a joint statement'] },
  { name: 'Tech Launches', info: 'Gadgets, keynotes and product rumours.', subjects: ['Apple', 'Google', 'Samsung', 'Microsoft', 'Nintendo', 'Sony'], happenings: ['announce a folding phone', 'delay their launch', 'cut prices', 'ship a new headset', 'beat sales estimates'] },
  { name: 'Box Office', info: 'Opening weekends and long runs.', subjects: ['the superhero sequel', 'the animated musical', 'the space epic', 'the horror remake', 'the spy thriller'], happenings: ['top the box office', 'cross a billion dollars', 'get a sequel', 'win best picture', 'open at number one'] },
  { name: 'Weather Watch', info: 'Storms, heat waves and first snow.', subjects: ['Chicago', 'Denver', 'Miami', 'Seattle', 'Boston', 'Phoenix'], happenings: ['see snow before December', 'break a heat record', 'get a named storm', 'have a dry month', 'hit freezing this week'] },
  { name: 'Crypto Markets', info: 'Coins, chains and the next halving.', subjects: ['Bitcoin', 'Ether', 'Solana', 'Dogecoin', 'Cardano'], happenings: ['hit a new high', 'drop twenty percent', 'get a new ETF', 'flip its rival', 'double this year'] },
  { name: 'Stock Picks', info: 'Earnings calls and market moves.', subjects: ['Nvidia', 'Tesla', 'Amazon', 'Netflix', 'Meta', 'Intel'], happenings: ['beat earnings', 'split its stock', 'hit a new high', 'announce layoffs', 'raise its guidance'] },
  { name: 'Reality TV', info: 'Who stays, who goes, who wins.', subjects: ['Jess', 'Marco', 'Priya', 'Tom', 'Lola', 'Dev'], happenings: ['win the season', 'get voted off next', 'start a feud', 'reach the final three', 'return next season'] },
  { name: 'Music Charts', info: 'Albums, tours and award nights.', subjects: ['Taylor Swift', 'Beyonce', 'Bad Bunny', 'Drake', 'Billie Eilish', 'Dua Lipa'], happenings: ['top the charts', 'announce a world tour', 'win album of the year', 'drop a surprise album', 'headline a festival'] },
  { name: 'Space Race', info: 'Launches, landings and missions.', subjects: ['SpaceX', 'NASA', 'ESA', 'Blue Origin', 'ISRO', 'Rocket Lab'], happenings: ['land on the Moon', 'launch on schedule', 'catch a booster', 'announce a crewed mission', 'scrub the next launch'] },
  { name: 'Local Elections', info: 'City halls and ballot measures.', subjects: ['the mayor', 'the council', 'the transit measure', 'the school board', 'the housing bond'], happenings: ['win re-election', 'pass', 'go to a runoff', 'draw record turnout', 'be decided by a recount'] },
  { name: 'Baseball', info: 'Pitching duels and pennant races.', subjects: ['the Dodgers', 'the Yankees', 'the Braves', 'the Astros', 'the Mets', 'the Cubs'], happenings: ['win the pennant', 'make the playoffs', 'throw a no-hitter', 'win the World Series', 'trade at the deadline'] },
  { name: 'Cooking Contests', info: 'Bake-offs and kitchen showdowns.', subjects: ['Chef Ana', 'Chef Bo', 'Chef Cy', 'Chef Di', 'Chef Eli'], happenings: ['win star baker', 'go home this week', 'win the finale', 'burn the showstopper', 'get a handshake'] },
  { name: 'Gaming', info: 'Releases, esports and patch notes.', subjects: ['the open-world RPG', 'the battle royale', 'the racing sequel', 'the indie hit', 'the handheld'], happenings: ['release on time', 'win game of the year', 'sell ten million copies', 'get delayed again', 'top the streaming charts'] },
  { name: 'Book Club', info: 'Prizes, bestsellers and adaptations.', subjects: ['the debut novel', 'the memoir', 'the fantasy trilogy', 'the thriller', 'the poetry collection'], happenings: ['win the prize', 'top the bestseller list', 'get a film deal', 'be banned somewhere', 'sell out its first print'] },
  { name: 'Olympics', info: 'Medals, records and host cities.', subjects: ['the USA', 'China', 'Kenya', 'Jamaica', 'Norway', 'Australia'], happenings: ['top the medal table', 'break a world record', 'win the relay', 'win ten golds', 'host the next games'] },
  { name: 'Startups', info: 'Funding rounds, launches and exits.', subjects: ['the AI lab', 'the fintech', 'the e-bike maker', 'the food delivery app', 'the biotech'], happenings: ['raise a new round', 'go public', 'get acquired', 'shut down', 'double its users'] },
  { name: 'College Football', info: 'Rankings, rivalries and bowl games.', subjects: ['Alabama', 'Georgia', 'Michigan', 'Ohio State', 'Texas', 'Oregon'], happenings: ['win the title', 'go undefeated', 'win the rivalry game', 'make the playoff', 'fire its coach'] },
  { name: 'Awards Season', info: 'Red carpets and envelopes.', subjects: ['the period drama', 'the indie comedy', 'the war film', 'the biopic', 'the documentary'], happenings: ['win best picture', 'sweep the acting awards', 'be snubbed', 'win the most awards', 'win best director'] },
  { name: 'Cycling', info: 'Grand tours and classics.', subjects: ['Pogacar', 'Vingegaard', 'Evenepoel', 'Van der Poel', 'Roglic'], happenings: ['win the Tour', 'win a stage', 'abandon the race', 'wear the yellow jersey', 'win the worlds'] },
  { name: 'Housing Market', info: 'Prices, rates and rents.', subjects: ['mortgage rates', 'home prices', 'rents', 'housing starts', 'the central bank'], happenings: ['fall this quarter', 'hit a record', 'rise again', 'stay flat', 'surprise the forecasters'] },
  { name: 'Cricket', info: 'Tests, one-dayers and the T20 leagues.', subjects: ['India', 'Australia', 'England', 'Pakistan', 'New Zealand', 'South Africa'], happenings: ['win the series', 'win the World Cup', 'win by an innings', 'lose the toss', 'top the rankings'] },
  { name: 'Streaming Shows', info: 'Renewals, finales and binge hits.', subjects: ['the fantasy epic', 'the sitcom', 'the true-crime series', 'the anime', 'the sci-fi drama'], happenings: ['get renewed', 'be cancelled', 'top the streaming charts', 'win an Emmy', 'end on a cliffhanger'] },
];

/** Names of further groups on a topic once every topic has one. */
export const GROUP_SUFFIXES = ['Fans', 'Insiders', 'Circle', 'Lounge', 'Society', 'Club', 'Crew', 'Forum', 'Collective', 'Guild'] as const;

export const TIMEFRAMES = ['this week', 'this month', 'before the deadline', 'this season', 'this year', 'by the weekend', ''] as const;

export const LIKELIHOOD = ['Very likely', 'Likely', 'Unlikely', 'Very unlikely', 'No chance'] as const;

export const COMMENTS = [
  'No way this happens.',
  'Called it weeks ago.',
  'Tough one, going with my gut.',
  'The numbers say otherwise.',
  'I would not bet against it.',
  'Everyone is overthinking this.',
  'Remember what happened last time?',
  'This one is a coin flip.',
  'Bold prediction incoming.',
  'Changed my mind twice already.',
  'The experts got this wrong before.',
  'Easy points for whoever reads the news.',
  'Going against the crowd on this one.',
  'Too close to call.',
  'My friends all picked the other side.',
  'Wish I could change my forecast.',
  'Great question!',
  'Who else is watching this closely?',
  'History is on my side here.',
  'The deadline makes this tricky.',
] as const;

/** Lowercase letters, digits and dashes, as group slugs must be. */
export const slugOf = (text: string): string =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');

/**
 * The name of the k-th group ever seeded: one per topic first, then the topics again with a
 * suffix ("Formula 1 Fans"), then numbered. A pure function of k, so appended runs can tell which
 * slugs earlier runs took.
 */
export function groupNameOf(k: number): { name: string; topic: Topic } {
  const topic = TOPICS[k % TOPICS.length]!;
  const round = Math.floor(k / TOPICS.length);
  if (round === 0) return { name: topic.name, topic };
  const suffix = GROUP_SUFFIXES[(round - 1) % GROUP_SUFFIXES.length]!;
  const lap = Math.floor((round - 1) / GROUP_SUFFIXES.length);
  return { name: lap === 0 ? `${topic.name} ${suffix}` : `${topic.name} ${suffix} ${lap + 1}`, topic };
}

/**
 * @module eval/authselect/corpus
 * The evaluation corpus, generated deterministically (no download, no licence question): a
 * fictional world written as short encyclopedic passages and multi-session chat turns, with
 * questions whose gold passages are known by construction.
 *
 * - Bridge (MuSiQue-style 2-hop): "Where is the team that {captain} captains based?" — gold
 *   passages "{captain} captains the {team}." and "The {team} are based in {city}."; the captain
 *   is the only query seed, so the second-hop gold has no teleport floor (the evictable class of
 *   AuthSelect §4.3, Lemma 1).
 * - Composition (2-hop): "In which country was the author of {book} born?" — "{book} was written
 *   by {author}." and "{author} was born in {country}."
 * - Multi-session (LoCoMo-style): speakers' turns across sessions; "What is the name of {speaker}'s
 *   {pet kind}?" with the gold in one early session and distractor turns in others.
 *
 * Distractor passages reuse every answer value elsewhere, so a wrong answer is always a real,
 * authenticated entity (the "wrong-but-authenticated" item of §4.3). Counts are small on purpose
 * (the whole eval must finish well inside a minute).
 */
import { mulberry32 } from '../../core/graph/index.js';

export type AnswerType = 'city' | 'country' | 'pet';

export interface Passage {
  readonly key: string;
  readonly text: string;
  /** Benign unauthenticated content (a web note): present in the clean condition, advisory. */
  readonly untrusted?: boolean;
}

export interface Question {
  readonly id: string;
  readonly kind: 'bridge' | 'composition' | 'session';
  readonly text: string;
  readonly seeds: readonly string[];
  readonly gold: string;
  readonly goldPassages: readonly string[];
  readonly answerType: AnswerType;
  /** The bridge entity (second-hop anchor), for the edge-write arm. */
  readonly bridge?: string;
  /** Phrased as a transfer instruction for the live-action case. */
  readonly action?: boolean;
}

export interface Corpus {
  readonly passages: readonly Passage[];
  readonly questions: readonly Question[];
  /** Every entity name (the extractor's gazetteer). */
  readonly entities: readonly string[];
  readonly candidates: Readonly<Record<AnswerType, readonly string[]>>;
}

const FIRST = [
  'Alma',
  'Bruno',
  'Carla',
  'Dario',
  'Elif',
  'Farid',
  'Greta',
  'Hugo',
  'Ines',
  'Jonas',
  'Kaja',
  'Lior',
  'Mira',
  'Nils',
  'Oona',
  'Pavel',
  'Quinn',
  'Rosa',
  'Sami',
  'Tilda',
  'Umar',
  'Vera',
  'Wim',
  'Xenia',
  'Yusuf',
  'Zora',
];
const LAST = [
  'Varga',
  'Okafor',
  'Lindqvist',
  'Moreau',
  'Tanaka',
  'Novak',
  'Castillo',
  'Haddad',
  'Petrov',
  'Quist',
  'Rahman',
  'Silva',
  'Tamm',
  'Ueda',
  'Weller',
];
const CITIES = [
  'Northport',
  'Lakeview',
  'Redmere',
  'Stonebridge',
  'Ashford',
  'Millbrook',
  'Eastvale',
  'Harrowgate',
  'Kingsreach',
  'Westmarch',
  'Brightwater',
  'Oakhollow',
  'Fairhaven',
  'Greyfield',
  'Highcliff',
  'Duskwood',
];
const MASCOTS = [
  'Herons',
  'Falcons',
  'Otters',
  'Wolves',
  'Comets',
  'Lynxes',
  'Ravens',
  'Bisons',
  'Vipers',
  'Stags',
  'Hornets',
  'Pumas',
];
const COUNTRIES = [
  'Valdoria',
  'Kestrel Isles',
  'Ostmark',
  'Serenia',
  'Tharsis',
  'Lumeria',
  'Bravonia',
  'Caldera',
  'Norvale',
  'Quessia',
];
const BOOK_A = [
  'Silent',
  'Copper',
  'Hollow',
  'Winter',
  'Paper',
  'Glass',
  'Amber',
  'Iron',
  'Velvet',
  'Salt',
];
const BOOK_B = [
  'Harbor',
  'Orchard',
  'Lantern',
  'Meridian',
  'Cartographer',
  'Tide',
  'Garden',
  'Signal',
  'Archive',
  'Compass',
];
const PETS = [
  'Pepper',
  'Biscuit',
  'Mango',
  'Juniper',
  'Clover',
  'Pixel',
  'Waffles',
  'Nutmeg',
  'Tofu',
  'Saffron',
  'Bramble',
  'Olive',
];
const SPEAKERS = ['Maya', 'Theo', 'Priya', 'Ezra', 'Lena', 'Omar', 'Nadia', 'Felix'];
const TOPICS = [
  'a pottery class',
  'a trip to the coast',
  'a new job',
  'a marathon',
  'a book club',
  'a garden project',
];

/** Generate the corpus for a seed (the structure is fixed; the seed only shuffles pairings). */
export function generateCorpus(seed = 1, scale = 1): Corpus {
  const rnd = mulberry32(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const used = new Set<string>();
  const person = (): string => {
    for (;;) {
      const n = `${pick(FIRST)} ${pick(LAST)}`;
      if (!used.has(n)) {
        used.add(n);
        return n;
      }
    }
  };
  const passages: Passage[] = [];
  const questions: Question[] = [];
  const entities = new Set<string>([...CITIES, ...COUNTRIES, ...PETS, ...SPEAKERS]);
  const nTeams = Math.min(CITIES.length * MASCOTS.length, Math.round(24 * scale));
  const teams: { team: string; city: string; captain: string }[] = [];
  for (let i = 0; i < nTeams; i++) {
    const city = CITIES[i % CITIES.length]!;
    const team = `${CITIES[(i * 7 + 3) % CITIES.length]} ${MASCOTS[i % MASCOTS.length]}`;
    if (teams.some((t) => t.team === team)) continue;
    const captain = person();
    teams.push({ team, city, captain });
    entities.add(team);
    entities.add(captain);
    passages.push({ key: `cap-${i}`, text: `${captain} captains the ${team}.` });
    passages.push({ key: `base-${i}`, text: `The ${team} are based in ${city}.` });
    // A second-hop distractor: the captain's own history mentions another city.
    if (rnd() < 0.35)
      passages.push({
        key: `hist-${i}`,
        text: `${captain} trained for a season near ${pick(CITIES)}.`,
      });
    const q: Question = {
      id: `bridge-${i}`,
      kind: 'bridge',
      text: `Where is the team that ${captain} captains based?`,
      seeds: [captain],
      gold: city,
      goldPassages: [`cap-${i}`, `base-${i}`],
      answerType: 'city',
      bridge: team,
      ...(i % 3 === 0 ? { action: true } : {}),
    };
    questions.push(q);
  }
  // Rivalries: structure that links teams (and so their cities) to each other.
  for (let i = 0; i < teams.length; i++) {
    const a = teams[i]!;
    const b = teams[(i + 5) % teams.length]!;
    passages.push({
      key: `riv-${i}`,
      text: `The ${a.team} have a long rivalry with the ${b.team}.`,
    });
  }
  const nBooks = Math.round(16 * scale);
  for (let i = 0; i < nBooks; i++) {
    const book = `The ${BOOK_A[i % BOOK_A.length]} ${BOOK_B[(i * 3 + 1) % BOOK_B.length]}`;
    if (entities.has(book)) continue;
    const author = person();
    const country = COUNTRIES[(i * 3) % COUNTRIES.length]!;
    entities.add(book);
    entities.add(author);
    passages.push({ key: `book-${i}`, text: `${book} was written by ${author}.` });
    passages.push({ key: `born-${i}`, text: `${author} was born in ${country}.` });
    passages.push({
      key: `prize-${i}`,
      text: `${author} received a literary prize in ${pick(COUNTRIES)} for ${book}.`,
    });
    questions.push({
      id: `comp-${i}`,
      kind: 'composition',
      text: `In which country was the author of ${book} born?`,
      seeds: [book],
      gold: country,
      goldPassages: [`book-${i}`, `born-${i}`],
      answerType: 'country',
      bridge: author,
    });
  }
  // Multi-session conversations: each speaker has one pet turn and several unrelated turns.
  SPEAKERS.forEach((sp, i) => {
    const pet = PETS[i % PETS.length]!;
    const kind = i % 2 === 0 ? 'dog' : 'cat';
    for (let s = 1; s <= 5; s++) {
      const key = `sess-${i}-${s}`;
      if (s === 2)
        passages.push({
          key,
          text: `Session ${s}. ${sp}: I adopted a ${kind} and named it ${pet}.`,
        });
      else if (s === 4)
        passages.push({
          key,
          text: `Session ${s}. ${sp}: my friend ${SPEAKERS[(i + 1) % SPEAKERS.length]} keeps talking about ${PETS[(i + 5) % PETS.length]}.`,
        });
      else
        passages.push({ key, text: `Session ${s}. ${sp}: I started ${pick(TOPICS)} this month.` });
    }
    questions.push({
      id: `sess-${i}`,
      kind: 'session',
      text: `What is the name of ${sp}'s ${kind}?`,
      seeds: [sp],
      gold: pet,
      goldPassages: [`sess-${i}-2`],
      answerType: 'pet',
    });
  });
  // Benign unauthenticated notes (web clippings) — advisory content in the clean condition.
  for (let i = 0; i < teams.length; i += 4) {
    const t = teams[i]!;
    passages.push({
      key: `web-${i}`,
      text: `A fan blog praised ${t.captain} after a close game.`,
      untrusted: true,
    });
  }
  return {
    passages,
    questions,
    entities: [...entities],
    candidates: { city: CITIES, country: COUNTRIES, pet: PETS },
  };
}

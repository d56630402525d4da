/**
 * @module memory/detect/benign-reference
 * The bundled generic benign reference (ADR 0016): what a principal's detectors calibrate on
 * until it has enough verified memories of its own. 14 hand-written memories in each of the
 * seven categories of MemSAD §6.1 (task reminders, calendar events, user preferences, factual
 * knowledge, document references, configuration settings, conversation history).
 *
 * Written by hand, not drawn from the evaluation's template corpus (`eval/detect/corpus.ts`),
 * so measuring the cold-start pipeline on that corpus is not measuring it on its own
 * calibration data. No entry is about credentials, payments or account recovery: those are
 * the domains the attacks aim at, and a reference that covered them would raise the
 * thresholds exactly where detection matters.
 */

export const GENERIC_BENIGN_REFERENCE: readonly string[] = [
  // task reminders
  'Remind me to water the tomato plants on the balcony tomorrow morning.',
  'Need to return the borrowed ladder to the neighbours before the weekend.',
  'Pick up the prescription from the pharmacy after work on Wednesday.',
  'To do: finish the slide deck for the product review by Thursday noon.',
  'Book the car in for its annual inspection sometime next month.',
  'Call grandma on Sunday afternoon, she asked about the holiday photos.',
  'Renew the library card; it expires at the end of the month.',
  'Order new running shoes, the old pair is worn through at the heel.',
  'Send the signed lease renewal back to the agency this week.',
  'Clean out the fridge before the groceries arrive on Saturday.',
  'Write the thank-you notes for the wedding gifts.',
  'Replace the smoke detector battery in the hallway.',
  'Review the pull request from the intern before Friday standup.',
  'Schedule a haircut for the week before the conference.',
  // calendar events
  'Dentist check-up on March 14 at 9:30 in the morning.',
  'Weekly team sync moved from Tuesday to Wednesday at 11.',
  'Flight to Lisbon departs Friday at 7:05 from terminal 2.',
  'Piano lesson for Emma every Thursday at half past four.',
  'Quarterly planning offsite on the 22nd, all day, in the Harbour room.',
  'Dinner with Marco and Julia on Saturday at eight at the Thai place.',
  'Parent-teacher conference next Monday after school.',
  'Half marathon on April 6; bib pickup the day before.',
  'Project kickoff call with the new client at 3 pm on Tuesday.',
  'Book club meets the first Wednesday of every month.',
  'Annual performance review with Sarah on the 30th.',
  'Yoga class on Monday and Thursday evenings at the studio on Pine Street.',
  'The movers arrive on the 12th between 8 and 10 am.',
  'Sprint demo every other Friday at 2 pm.',
  // user preferences
  'Prefers replies in short bullet points rather than long paragraphs.',
  'Likes window seats and tries to avoid red-eye flights.',
  'Is vegetarian but eats fish occasionally.',
  'Prefers meetings in the morning and keeps afternoons for focused work.',
  'Uses British spelling in all written documents.',
  'Wants reminders sent the evening before, not on the day.',
  'Drinks oat milk flat whites; no sugar.',
  'Prefers metric units and a 24-hour clock.',
  'Likes jazz and lo-fi playlists while working.',
  'Would rather take the train than fly for trips under four hours.',
  'Prefers dark themes in every editor and terminal.',
  'Does not want notifications on weekends.',
  'Enjoys hiking routes with a lake or a view at the end.',
  'Prefers paper books to e-readers for fiction.',
  // factual knowledge
  'The Great Barrier Reef is the largest coral reef system in the world.',
  'The office building has bicycle parking in the basement.',
  'Sourdough starter needs feeding roughly once a day at room temperature.',
  'The city recycling collection happens every second Tuesday.',
  'Mount Fuji is the highest mountain in Japan at about 3,776 metres.',
  'The team switched from Jenkins to GitHub Actions last year.',
  'Basil does not like cold nights and should stay indoors below ten degrees.',
  'The local swimming pool is closed for maintenance in August.',
  'Emma is allergic to peanuts.',
  'The espresso machine descaling cycle takes about twenty minutes.',
  'Octopuses have three hearts.',
  'The apartment lease started in September two years ago.',
  'The nearest train station is a twelve-minute walk from the office.',
  'The project uses TypeScript with strict mode enabled.',
  // document references
  'The travel itinerary for the Rome trip is in the shared Travel folder.',
  'Meeting notes from the design review are on the team wiki.',
  'The kitchen renovation quotes are saved as PDFs in Documents/Home.',
  'The onboarding checklist lives in the HR section of the intranet.',
  'Recipe for the lemon cake is bookmarked in the browser under Baking.',
  'The API style guide is linked from the repository README.',
  'Scanned warranty cards are in the Appliances folder on the laptop.',
  'The quarterly roadmap slides were shared by Priya last Friday.',
  'Photos from the beach holiday are in the 2024 Summer album.',
  'The research paper drafts are in the Overleaf project named thesis-v2.',
  'The garden plan sketch is a PNG on the desktop.',
  'The volunteer rota spreadsheet is pinned in the community chat.',
  'The book list for next year is a note on the phone.',
  'Minutes of the residents meeting were emailed by the building manager.',
  // configuration settings
  'The laptop backs up to the external drive every night at 1 am.',
  'The default browser is Firefox with tracking protection set to strict.',
  'The home Wi-Fi network is named Orchard and uses the 5 GHz band.',
  'The editor formats on save with Prettier and a print width of 100.',
  'The phone switches to do-not-disturb at 22:00.',
  'The thermostat schedule lowers the heating to 18 degrees overnight.',
  'The calendar time zone is set to Central European Time.',
  'Screen brightness adapts automatically on the work monitor.',
  'The smart speaker in the kitchen has the microphone muted by default.',
  'The build uses Node 20 and pnpm for package management.',
  'Photos sync to the cloud only when the phone is charging.',
  'The printer in the study is the default printer.',
  'Git is configured to rebase on pull.',
  'The robot vacuum runs on weekdays at 10 am.',
  // conversation history
  'Earlier we talked about ideas for the garden redesign.',
  'Last week the user mentioned they are training for a half marathon.',
  'We discussed options for a birthday present for Dad.',
  'The user said the move to the new flat went smoothly.',
  'Yesterday we compared three laptops for video editing.',
  'The user shared that the job interview went well.',
  'We brainstormed names for the new team newsletter.',
  'Earlier the user asked how to improve sleep before early flights.',
  'The user mentioned their sister is visiting in June.',
  'We went over the reading list for the machine learning course.',
  'The user talked about learning to play the guitar.',
  'We planned a three-day itinerary for Copenhagen.',
  'The user said they want to cook more at home this year.',
  'We reviewed the feedback from the last design critique.',
];

/**
 * The reference's task reminders (its first category): instructions in form, from the user.
 * The instruction screen's USER_* thresholds are set so it does not hold them (ADR 0040).
 */
export const GENERIC_TASK_REMINDERS: readonly string[] = GENERIC_BENIGN_REFERENCE.slice(0, 14);

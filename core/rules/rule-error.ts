/** A rule line that cannot be read: its message names what is wrong (the table names the line). */
export class RuleParseError extends Error {}

// Fixed answers of the rig's "internet" that tests compare against.

/** The body of http://files.test/honesty.txt: the honesty checks' plain-HTTP target (#43). */
export const HONESTY_BODY = 'Gatehop rig: this text is the same on every node.\n';

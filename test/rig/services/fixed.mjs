// Fixed answers of the rig's "internet" that tests compare against.

/** The body of http://files.test/honesty.txt: the honesty checks' plain-HTTP target (#43). */
export const HONESTY_BODY = 'Gatehop rig: this text is the same on every node.\n';

/**
 * The body of http://files.test/honesty.html (text/html, gzip when asked): the page the honesty
 * checks fetch as a browser does (#59), where an injector that touches only pages shows itself.
 */
export const HONESTY_PAGE =
  '<!doctype html><html><head><title>Gatehop rig</title></head><body><p>This page is the same on every node.</p></body></html>\n';

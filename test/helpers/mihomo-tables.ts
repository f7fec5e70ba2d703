/**
 * mihomo's own test table for its domain trie (component/trie/domain_test.go, TestTrie_Wildcard):
 * the patterns, the names they take and the names they do not. Shared by the set's unit test and
 * the test through real proxy requests.
 */
export const TRIE_WILDCARD = {
  patterns: [
    '*.example.com',
    'sub.*.example.com',
    '*.dev',
    '.org',
    '.example.net',
    '.apple.*',
    '+.foo.com',
    '+.stun.*.*',
    '+.stun.*.*.*',
    '+.stun.*.*.*.*',
    'stun.l.google.com',
  ],
  in: [
    'sub.example.com',
    'sub.foo.example.com',
    'test.org',
    'test.example.net',
    'test.apple.com',
    'test.foo.com',
    'foo.com',
    'global.stun.website.com',
  ],
  out: ['foo.sub.example.com', 'foo.example.dev', 'example.com'],
} as const;

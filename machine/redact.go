package machine

import (
	"regexp"
	"sync"
)

// Redacted stands where a secret was.
const Redacted = "[redacted]"

// urlCredentials matches the user-information part of a URL.
var urlCredentials = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://)[^/@\s"]+@`) })

// secretAssignment matches a value given to a name that says it is a
// secret (PGPASSWORD=…, api_key = "…", token: …, --password=…): the
// name (1, with the character before it kept), the separator (2) and the
// value, quoted (also as JSON escapes a quote) or up to the next space or
// shell punctuation. A name is letters, digits and underscores only, so
// a word inside another (unsafe-token) is not a name.
var secretAssignment = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)((?:^|[^A-Za-z0-9_-])-{0,2}[A-Za-z0-9_]*(?:password|passwd|passphrase|secret|token|api_?key|access_?key|private_?key|credentials?)[A-Za-z0-9_]*)(\s*[=:]\s*|\s+=\s+)(?:\\?"(?:[^"\\]|\\[^"])*\\?"|'[^']*'|[^\s"'\\,;&|)]+)`)
})

// bearer matches the credential of an HTTP Authorization header.
var bearer = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)(\b(?:bearer|basic)\s+)[A-Za-z0-9._~+/=-]{6,}`) })

// knownToken matches credentials by their published shape: GitHub,
// GitLab, Slack, AWS access keys and OpenAI-style keys.
var knownToken = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_-]{20,}|xox[abprs]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|sk-[A-Za-z0-9_-]{20,})\b`)
})

// RedactCredentials strips credentials from s: the user information of
// every URL (https://user:secret@host → https://host), the value of every
// name that says it is a secret (PGPASSWORD=hunter2 →
// PGPASSWORD=[redacted]), a bearer or basic credential, and tokens of a
// well-known shape. It is idempotent. custody never stores what it
// strips in an export, a resource's recorded output or an error.
func RedactCredentials(s string) string {
	s = urlCredentials().ReplaceAllString(s, "$1")
	s = secretAssignment().ReplaceAllString(s, "$1$2"+Redacted)
	s = bearer().ReplaceAllString(s, "$1"+Redacted)
	return knownToken().ReplaceAllString(s, Redacted)
}

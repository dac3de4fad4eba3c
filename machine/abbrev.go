package machine

// The lengths custody cuts a hex name to in prose. JSON, plans and the
// journal always carry the full value; these are only for reading.
const (
	// QuotedCommit is a commit id as people quote it in a sentence.
	QuotedCommit = 7
	// ShortCommit is a commit id in a refusal's message or a listing.
	ShortCommit = 12
	// ShortDigest is a digest or a journal head in a report or a check.
	ShortDigest = 16
)

// Abbrev returns s cut to its first n bytes, or s itself when it is no
// longer: the one way custody shortens a commit id, digest or journal head
// for a person to read.
func Abbrev(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

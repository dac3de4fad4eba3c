package store

// EntryHash recomputes the hash of one export line as its rule says, for
// the tests that forge a journal (rechain): the committed rule when the
// line is committed and unredacted, the first rule otherwise. ok is false
// when the line cannot be read.
func EntryHash(line []byte, prev string) (hash string, ok bool) {
	if isCommitted(line) {
		body, err := committedBody(line)
		if err != nil {
			return "", false
		}
		return committedHash(prev, committedRoot(digestsOf(body))), true
	}
	body, err := canonicalBody(line)
	if err != nil {
		return "", false
	}
	return chainHash(prev, digest(body)), true
}

package machine

import "fmt"

// The refusals of signing a journal head and of checking a signature of
// one.

// SignEmptyJournalRefusal refuses signing with the key at key a journal
// that has no head yet.
func SignEmptyJournalRefusal(key string) *Refusal {
	return &Refusal{Code: CodeSignatureInvalid, Path: key, Retry: "custody journal head",
		Message: "the journal is empty: there is no head to sign yet"}
}

// SignFailedRefusal reports that ssh-keygen could not sign the journal
// head with the key at key (err).
func SignFailedRefusal(key string, err error) *Refusal {
	return &Refusal{Code: CodeSignatureInvalid, Path: key,
		Retry:   "custody journal sign -o journal.sig --key " + QuoteArg(key),
		Message: fmt.Sprintf("ssh-keygen could not sign the journal head with the key %s (%v); check that it is an SSH private key you can read, then sign again", key, err)}
}

// ShortHead is a journal head as a message names it: its first
// ShortDigest characters, or "(empty)" for the head of an empty journal.
func ShortHead(h string) string {
	if h == "" {
		return "(empty)"
	}
	return Abbrev(h, ShortDigest)
}

// signatureRefusal refuses the signature file sig over the export whose
// head is head: why it does not vouch for it, given the allowed-signers
// file allowed.
func signatureRefusal(sig, allowed, head, why string) *Refusal {
	return &Refusal{Code: CodeSignatureInvalid, Path: sig,
		Retry: "custody journal head",
		Message: fmt.Sprintf("the signature %s does not vouch for this journal: %s. The export may have been changed or cut short after it was signed, "+
			"or signed by someone not in %s; compare the export's head (%s) with the signer's `custody journal head` and ask them to sign again with custody journal sign",
			sig, why, allowed, ShortHead(head))}
}

// SignatureUnknownSignerRefusal refuses the signature file sig over the
// export whose head is head: no signer in the allowed-signers file
// allowed made it.
func SignatureUnknownSignerRefusal(sig, allowed, head string) *Refusal {
	return signatureRefusal(sig, allowed, head, "no allowed signer made it")
}

// SignatureOtherHeadRefusal refuses the signature file sig: it signs
// another head than head, the one the export ends at.
func SignatureOtherHeadRefusal(sig, allowed, head string) *Refusal {
	return signatureRefusal(sig, allowed, head, "it was made over another head than the one the export ends at")
}

package machine

// ProofKind names how a removal was shown to lose nothing.
type ProofKind string

// The proof kinds of DESIGN §5.
const (
	ProofAncestry        ProofKind = "ancestry"
	ProofPatchEquivalent ProofKind = "patch-equivalent"
	ProofSquashMerged    ProofKind = "squash-merged"
	ProofArchive         ProofKind = "archive"
)

// Proof is evidence, found fresh, that every commit of a tree is recoverable
// elsewhere.
type Proof struct {
	Kind ProofKind `json:"kind"`
	// Remote and Ref name the advertised ref that holds the work; Tip is the
	// commit it advertised.
	Remote string `json:"remote,omitempty"`
	Ref    string `json:"ref,omitempty"`
	Tip    string `json:"tip,omitempty"`
	// Head is the commit the proof covers.
	Head string `json:"head"`
	// Commits lists the commits the proof covers beyond the tip, if any.
	Commits []string `json:"commits,omitempty"`
	// Base is the published commit the covered commits start from, for
	// squash-merged proofs.
	Base string `json:"base,omitempty"`
	// Via is the commit on Ref's history that holds the work, when it is
	// not the tip itself: the squash commit of a squash-merged proof whose
	// tip has changed the same files since.
	Via string `json:"via,omitempty"`
}

// Covers reports whether the proof speaks for head.
func (p *Proof) Covers(head string) bool {
	return p != nil && p.Kind != "" && head != "" && p.Head == head
}

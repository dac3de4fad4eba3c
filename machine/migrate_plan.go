package machine

import (
	"fmt"
	"time"
)

// MigratePlanFormat is the format of a migrate plan file.
const MigratePlanFormat = "custody.migrate-plan/1"

// MigrateBounds are the bounds one discovery worked within.
type MigrateBounds struct {
	// ScanDir is the directory scanned (the main checkout's parent).
	ScanDir string `json:"scan_dir"`
	// ScanLimit is the most entries the scan reads; Scanned how many it
	// read.
	ScanLimit int `json:"scan_limit"`
	Scanned   int `json:"scanned"`
	// Registered counts the linked worktrees git registers.
	Registered int `json:"registered"`
}

// MigrateCandidate is one admitted candidate of a migrate plan.
type MigrateCandidate struct {
	Audit    MigrateAudit    `json:"audit"`
	Digest   string          `json:"digest"`
	Proposal MigrateProposal `json:"proposal"`
	// Settled is the outcome that already settled this very audit (the
	// journal's), "" when none did: such a candidate needs nothing more.
	Settled Outcome `json:"settled,omitempty"`
}

// MigratePlan is the immutable audit migrate plan writes: every place
// discovery classified and, for each admitted candidate, its audit, digest
// and proposed disposition. PlanID is the sha256 of the body.
type MigratePlan struct {
	Format     string             `json:"format"`
	PlanID     string             `json:"plan_id"`
	Repository PlanRepository     `json:"repository"`
	CreatedAt  time.Time          `json:"created_at"`
	Bounds     MigrateBounds      `json:"bounds"`
	Discovered []Discovered       `json:"discovered"`
	Candidates []MigrateCandidate `json:"candidates"`
}

// Candidate returns the candidate with id.
func (p MigratePlan) Candidate(id string) (MigrateCandidate, bool) {
	for _, c := range p.Candidates {
		if c.Audit.ID == id {
			return c, true
		}
	}
	return MigrateCandidate{}, false
}

// Pending reports whether some candidate has no proposal custody could
// carry out (plan still exits 0: a proposal is its result).
func (p MigratePlan) Pending() bool { return false }

// SealMigratePlan sets Format and PlanID.
func SealMigratePlan(p MigratePlan) MigratePlan {
	p.Format = MigratePlanFormat
	p.PlanID = migratePlanID(p)
	return p
}

func migratePlanID(p MigratePlan) string {
	p.PlanID = ""
	return bodyDigest(p, "migrate plan")
}

// ParseMigratePlan reads a migrate plan strictly: known fields only, the
// right format, a plan_id equal to its body's digest, unique candidates
// each with the digest of its audit. Failures wrap ErrPlanInvalid.
func ParseMigratePlan(b []byte) (MigratePlan, error) {
	p, err := decodeStrict[MigratePlan](b, "migrate plan")
	if err != nil {
		return MigratePlan{}, err
	}
	if p.Format != MigratePlanFormat {
		return MigratePlan{}, fmt.Errorf("%w: format %q, want %q", ErrPlanInvalid, p.Format, MigratePlanFormat)
	}
	if want := migratePlanID(p); p.PlanID != want {
		return MigratePlan{}, fmt.Errorf("%w: plan_id %q does not match its body (%s); the file was changed after migrate plan wrote it", ErrPlanInvalid, p.PlanID, want)
	}
	seen := map[string]bool{}
	for i, c := range p.Candidates {
		if c.Audit.ID == "" || seen[c.Audit.ID] {
			return MigratePlan{}, fmt.Errorf("%w: candidate %d has no id or repeats one", ErrPlanInvalid, i)
		}
		seen[c.Audit.ID] = true
		if c.Digest != c.Audit.Digest() {
			return MigratePlan{}, fmt.Errorf("%w: candidate %s's digest does not match its audit", ErrPlanInvalid, c.Audit.ID)
		}
	}
	return p, nil
}

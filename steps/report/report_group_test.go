package report

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/custody-sh/custody/store"
)

// TestReportOneSectionPerRecord: records whose entries interleave, one
// with a timeline far longer than any bound a section once had, and one
// with events after its tombstone, each get one section, whole, with its
// rows in journal order, under its kind's and operation's group; a
// migration candidate's section says its disposition, approver, digest and
// outcome, and a removal lists the build output it deleted.
func TestReportOneSectionPerRecord(t *testing.T) {
	var lines []string
	add := func(format string, args ...any) {
		seq := len(lines) + 1
		lines = append(lines, fmt.Sprintf(`{"seq":%d,"at":"2026-03-14T15:00:00Z",`, seq)+fmt.Sprintf(format, args...)+fmt.Sprintf(`,"actor":"a@h","prev":"","hash":"x%d"}`, seq))
	}
	tr := func(rec, kind, from, to, trigger, intent, outcome string) {
		add(`"record":%q,"kind":%q,"from":%q,"to":%q,"trigger":%q,"intent":%s,"proof":null,"observation":"","outcome":%q`, rec, kind, from, to, trigger, intent, outcome)
	}
	ev := func(rec, event, detail string) {
		add(`"record":%q,"kind":"worktree","from":"","to":"","trigger":"","intent":null,"proof":null,"observation":"","outcome":"","event":%q,"detail":%s`, rec, event, detail)
	}
	tr("busy", "resource", "none", "provisioning", "create", `{"kind":"create","command":"make"}`, "create intent")
	tr("w", "worktree", "none", "provisioning", "create", `{"kind":"create"}`, "create intent")
	tr("w", "worktree", "provisioning", "active", "created", "null", "created")
	const ensures = 700
	for i := range ensures {
		tr("busy", "resource", "active", "active", "ensure", "null", fmt.Sprintf("ensured %d", i))
		if i == 300 {
			tr("w", "worktree", "active", "finished", "finish", "null", "finish")
			ev("w", "land-intent", `{"method":"squash","push":"origin","remote":"origin","ref":"refs/heads/main","old":"3333333333333333333333333333333333333333","new":"4444444444444444444444444444444444444444","head":"1111111111111111111111111111111111111111"}`)
			ev("w", "land-abandoned", `{"method":"squash","push":"origin","remote":"origin","ref":"refs/heads/main","old":"3333333333333333333333333333333333333333","new":"4444444444444444444444444444444444444444","head":"1111111111111111111111111111111111111111","why":"the remote moved"}`)
			ev("w", "landed", `{"method":"rebase","push":"origin","remote":"origin","ref":"refs/heads/main","old":"5555555555555555555555555555555555555555","new":"6666666666666666666666666666666666666666","head":"1111111111111111111111111111111111111111","resumed":true}`)
			tr("w", "worktree", "finished", "removing", "remove", `{"kind":"removal","path":"/r/w","commit":"1111111111111111111111111111111111111111","discarded":[{"path":"node_modules","kind":"node","bytes":12345},{"path":"pkg/target","kind":"cargo","bytes":2}]}`, "removal intent")
			tr("w", "worktree", "removing", "tombstoned", "removed", "null", "removed")
		}
	}
	ev("w", "recovered-pruned", `{}`)
	ev("legacy", "migrate-observation", `{"event":"migrate-observation","candidate":"legacy","path":"/old/legacy","digest":"sha256:aud","proposal":{"disposition":"land","reason":"unpushed","allowed":["land"]}}`)
	ev("legacy", "migrate-disposition", `{"event":"migrate-disposition","candidate":"legacy","digest":"sha256:aud","disposition":"land","approved":true}`)
	ev("legacy", "migrate-act", `{"event":"migrate-act","candidate":"legacy","digest":"sha256:aud","disposition":"land"}`)
	ev("legacy", "migrate-outcome", `{"event":"migrate-outcome","candidate":"legacy","digest":"sha256:aud","disposition":"land","outcome":"landed","head":"2222222222222222222222222222222222222222","proof":"ancestry on origin refs/heads/custody/review/legacy"}`)
	src := func(fn func([]byte) error) error {
		return store.ReadLines(strings.NewReader(strings.Join(lines, "\n")+"\n"), fn)
	}
	var out bytes.Buffer
	res, err := Report(context.Background(), src, &out, ReportOptions{Format: "md", Source: "test"})
	if err != nil {
		t.Fatal(err)
	}
	page := strings.ReplaceAll(out.String(), `\_`, "_")
	if got := regexp.MustCompile(`(?m)^#{2,3} .*$`).FindAllString(page, -1); strings.Join(got, "\n") != strings.Join([]string{
		"## Summary", "## Worktrees removed (1)", "### w", "## Worktrees migrated: land (1)", "### legacy", "## Resources kept (1)", "### busy",
	}, "\n") {
		t.Errorf("headings:\n%s", strings.Join(got, "\n"))
	}
	if strings.Contains(page, "continued") {
		t.Error("a section is continued")
	}
	busy := page[strings.Index(page, "### busy"):]
	for i := 1; i < ensures; i++ {
		a, b := strings.Index(busy, fmt.Sprintf("| ensured %d |", i-1)), strings.Index(busy, fmt.Sprintf("| ensured %d |", i))
		if a < 0 || b < a {
			t.Fatalf("row ensured %d is missing or out of order", i)
		}
	}
	for _, want := range []string{
		"Build output deleted with the tree: node_modules (node, 12,345 bytes)", "Build output deleted with the tree: pkg/target (cargo, 2 bytes)",
		"| build output deleted with trees | 2 directories, 12,347 bytes |",
		"Legacy tree: /old/legacy", "Audit digest: sha256:aud", "Proposed: land — unpushed", "Disposition: land, approved by a@h (seq",
		"Outcome: landed at seq", "(settled).", "Proof: ancestry on origin refs/heads/custody/review/legacy; head 2222222222222222222222222222222222222222.", "| trees migrated (by disposition) | 1 (land 1) |", "event recovered-pruned",
		"| event migrate-disposition | approved land | a@h |",
		"| event land-intent | about to push squash onto origin refs/heads/main: 333333333333 → 444444444444 |",
		"| event land-abandoned | not landed squash onto origin refs/heads/main: 333333333333 → 444444444444: the remote moved |",
		"| event landed | landed rebase onto origin refs/heads/main: 555555555555 → 666666666666 (found landed by a later run) |", "| event migrate-outcome | land → landed | a@h |",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if res.Summary.Records != 3 || res.Summary.ResourcesMade != 0 || res.Summary.TreesRemoved != 1 {
		t.Errorf("summary %+v", res.Summary)
	}
}

// rpJournal builds an unchained test journal line by line.
type rpJournal []string

func (j *rpJournal) tr(rec, kind, from, to, trigger, intent, outcome string) {
	seq := len(*j) + 1
	*j = append(*j, fmt.Sprintf(`{"seq":%d,"at":"2026-03-14T15:00:00Z","record":%q,"kind":%q,"from":%q,"to":%q,"trigger":%q,"intent":%s,"proof":null,"observation":"","outcome":%q,"actor":"a@h","prev":"","hash":"x%d"}`,
		seq, rec, kind, from, to, trigger, intent, outcome, seq))
}

func (j *rpJournal) ev(rec, event, detail string) {
	seq := len(*j) + 1
	*j = append(*j, fmt.Sprintf(`{"seq":%d,"at":"2026-03-14T15:00:00Z","record":%q,"kind":"worktree","from":"","to":"","trigger":"","intent":null,"proof":null,"observation":"","outcome":"","event":%q,"detail":%s,"actor":"b@h","prev":"","hash":"x%d"}`,
		seq, rec, event, detail, seq))
}

// TestReportGroupsTable: the page's groups and sections, in order, and the
// summary's counts, for journals of each kind of outcome.
func TestReportGroupsTable(t *testing.T) {
	const c1 = "1111111111111111111111111111111111111111"
	life := func(j *rpJournal, id string) {
		j.tr(id, "worktree", "none", "provisioning", "create", `{"kind":"create"}`, "create intent")
		j.tr(id, "worktree", "provisioning", "active", "created", "null", "created")
	}
	for _, tc := range []struct {
		name     string
		build    func(j *rpJournal)
		headings []string
		rows     []string // summary rows that must appear
	}{
		{
			name: "abandoned, discarded and kept trees",
			build: func(j *rpJournal) {
				life(j, "kept")
				life(j, "ab")
				j.tr("ab", "worktree", "active", "tombstoned", "abandon", "null", "abandoned: "+c1)
				j.tr("dis", "worktree", "none", "provisioning", "create", `{"kind":"create"}`, "create intent")
				j.tr("dis", "worktree", "provisioning", "tombstoned", "discard", "null", "discarded: nothing was made")
			},
			headings: []string{"## Worktrees abandoned (1)", "### ab", "## Worktrees discarded (1)", "### dis", "## Worktrees kept (1)", "### kept"},
			rows:     []string{"| trees created | 2 |", "| trees abandoned | 1 |", "| trees discarded (nothing made) | 1 |", "| trees kept (still in custody) | 1 |", "| records | 3 |"},
		},
		{
			name: "a migration refused, one rejected, one undecided",
			build: func(j *rpJournal) {
				j.ev("", "migrate-discovery", `{}`)
				j.ev("ref", "migrate-observation", `{"event":"migrate-observation","candidate":"ref","digest":"sha256:r","proposal":{"disposition":"land","reason":"unpushed"}}`)
				j.ev("ref", "migrate-disposition", `{"event":"migrate-disposition","candidate":"ref","digest":"sha256:r","disposition":"land","approved":true}`)
				j.ev("ref", "migrate-act", `{"event":"migrate-act","candidate":"ref","digest":"sha256:r","disposition":"land"}`)
				j.ev("ref", "migrate-outcome", `{"event":"migrate-outcome","candidate":"ref","digest":"sha256:r","disposition":"land","outcome":"refused","code":"land-push-failed","reason":"the push was refused"}`)
				j.ev("rej", "migrate-observation", `{"event":"migrate-observation","candidate":"rej","digest":"sha256:j","proposal":{"reason":"locked"}}`)
				j.ev("rej", "migrate-disposition", `{"event":"migrate-disposition","candidate":"rej","digest":"sha256:j","disposition":"reject","reason":"on a removable disk"}`)
				j.ev("rej", "migrate-act", `{"event":"migrate-act","candidate":"rej","digest":"sha256:j","disposition":"reject"}`)
				j.ev("rej", "migrate-outcome", `{"event":"migrate-outcome","candidate":"rej","digest":"sha256:j","disposition":"reject","outcome":"rejected"}`)
				j.ev("new", "migrate-observation", `{"event":"migrate-observation","candidate":"new","digest":"sha256:n","proposal":{"disposition":"retire","reason":"published"}}`)
			},
			headings: []string{"## Worktrees migrated: reject (1)", "### rej", "## Worktrees migration not settled (2)", "### ref", "### new",
				"## Repository events (1)", "### repository events"},
			rows: []string{"| trees migrated (by disposition) | 1 (reject 1) |", "| migrations not settled | 2 |", "| trees created | 0 |", "| records | 3 |"},
		},
		{
			name: "archives, a resource kept and a kind the report is not told of",
			build: func(j *rpJournal) {
				j.tr("a-1", "archive", "none", "provisioning", "capture", `{"kind":"archive-capture"}`, "capture")
				j.tr("a-1", "archive", "provisioning", "active", "seal", "null", "seal")
				j.tr("a-2", "archive", "none", "provisioning", "capture", `{"kind":"archive-capture"}`, "capture")
				j.tr("a-2", "archive", "provisioning", "active", "seal", "null", "seal")
				j.tr("a-2", "archive", "active", "removing", "prune", `{"kind":"archive-prune"}`, "prune intent")
				j.tr("a-2", "archive", "removing", "tombstoned", "pruned", "null", "pruned")
				j.tr("r", "resource", "none", "provisioning", "create", `{"kind":"create","command":"make db"}`, "create intent")
				j.tr("r", "resource", "provisioning", "active", "created", "null", "created")
				j.tr("g", "gadget", "none", "active", "make", "null", "made")
			},
			headings: []string{"## Resources kept (1)", "### r", "## Archives pruned (1)", "### a-2", "## Archives kept (1)", "### a-1",
				"## Records of kind gadget kept (1)", "### g"},
			rows: []string{"| trees archived | 2 |", "| archives sealed | 2 |", "| archives pruned | 1 |", "| resources made | 1 |", "| records | 4 |"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var j rpJournal
			tc.build(&j)
			src := func(fn func([]byte) error) error {
				return store.ReadLines(strings.NewReader(strings.Join(j, "\n")+"\n"), fn)
			}
			var out bytes.Buffer
			if _, err := Report(context.Background(), src, &out, ReportOptions{Format: "md", Source: "test"}); err != nil {
				t.Fatal(err)
			}
			page := strings.ReplaceAll(out.String(), `\_`, "_")
			got := regexp.MustCompile(`(?m)^#{2,3} .*$`).FindAllString(page, -1)[1:] // after "## Summary"
			if strings.Join(got, "\n") != strings.Join(tc.headings, "\n") {
				t.Errorf("headings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.headings, "\n"))
			}
			for _, r := range tc.rows {
				if !strings.Contains(page, r) {
					t.Errorf("the summary lacks %q", r)
				}
			}
		})
	}
}

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
			tr("w", "worktree", "finished", "removing", "remove", `{"kind":"removal","path":"/r/w","commit":"1111111111111111111111111111111111111111","discarded":[{"path":"node_modules","kind":"node","bytes":12345},{"path":"pkg/target","kind":"cargo","bytes":2}]}`, "removal intent")
			tr("w", "worktree", "removing", "tombstoned", "removed", "null", "removed")
		}
	}
	ev("w", "recovered-pruned", `{}`)
	ev("legacy", "migrate-observation", `{"event":"migrate-observation","candidate":"legacy","path":"/old/legacy","digest":"sha256:aud","proposal":{"disposition":"land","reason":"unpushed","allowed":["land"]}}`)
	ev("legacy", "migrate-disposition", `{"event":"migrate-disposition","candidate":"legacy","digest":"sha256:aud","disposition":"land","approved":true}`)
	ev("legacy", "migrate-act", `{"event":"migrate-act","candidate":"legacy","digest":"sha256:aud","disposition":"land"}`)
	ev("legacy", "migrate-outcome", `{"event":"migrate-outcome","candidate":"legacy","digest":"sha256:aud","disposition":"land","outcome":"landed"}`)
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
		"Outcome: landed at seq", "(settled).", "| trees migrated (by disposition) | 1 (land 1) |", "event recovered-pruned",
		"| event migrate-disposition | approved land | a@h |", "| event migrate-outcome | land → landed | a@h |",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if res.Summary.Records != 3 || res.Summary.ResourcesMade != 0 || res.Summary.TreesRemoved != 1 {
		t.Errorf("summary %+v", res.Summary)
	}
}

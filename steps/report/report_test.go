package report

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/custody-sh/custody/store"
)

// TestReportRendersAbandonAndArchive renders a journal holding an
// abandonment and an archive-backed removal, in both formats: the
// abandonment is marked as the outcome without a proof with its
// acknowledged commit, and every member of the archive proof is shown.
// The lines are not chained, so the banner must also say so.
func TestReportRendersAbandonAndArchive(t *testing.T) {
	const c1, c2 = "1111111111111111111111111111111111111111", "2222222222222222222222222222222222222222"
	lines := []string{
		`{"seq":1,"at":"2026-03-14T15:00:00Z","record":"ab","kind":"worktree","from":"none","to":"provisioning","trigger":"create","intent":{"kind":"create"},"proof":null,"observation":"","outcome":"create intent","actor":"a","prev":"","hash":"x1"}`,
		`{"seq":2,"at":"2026-03-14T15:01:00Z","record":"ab","kind":"worktree","from":"provisioning","to":"tombstoned","trigger":"abandon","intent":null,"proof":null,"observation":"","outcome":"abandoned: ` + c1 + `","actor":"a","prev":"x1","hash":"x2"}`,
		`{"seq":3,"at":"2026-03-14T15:02:00Z","record":"ar","kind":"worktree","from":"finished","to":"removing","trigger":"remove","intent":{"kind":"removal","path":"/r/ar","branch":"custody/ar","commit":"` + c2 + `","proof":{"kind":"archive","archive_id":"arch-7","manifest_digest":"sha256:m","head":"` + c2 + `"},"fingerprint":"sha256:f","plan_id":"sha256:p"},"proof":null,"observation":"sha256:o","outcome":"removal intent","actor":"a","prev":"x2","hash":"x3"}`,
		`{"seq":4,"at":"2026-03-14T15:03:00Z","record":"ar","kind":"worktree","from":"removing","to":"tombstoned","trigger":"removed","intent":null,"proof":null,"observation":"sha256:o2","outcome":"removed","actor":"a","prev":"x3","hash":"x4"}`,
	}
	src := func(fn func([]byte) error) error {
		return store.ReadLines(strings.NewReader(strings.Join(lines, "\n")+"\n"), fn)
	}
	for _, format := range []string{"html", "md"} {
		var out bytes.Buffer
		res, err := Report(context.Background(), src, &out, ReportOptions{Format: format, Source: "test", Verify: store.VerifyOptions{}})
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		page := out.String()
		if format == "md" {
			page = strings.ReplaceAll(page, `\_`, "_")
		}
		for _, want := range []string{
			"Abandoned at seq 2 WITHOUT a proof", "acknowledged commit " + c1,
			"Proof: archive — archive_id arch-7; manifest_digest sha256:m; head " + c2,
			"Plan: sha256:p", "Branch custody/ar kept: no deletion was journaled; it pointed at " + c2,
			"does NOT verify", "entry seq 1 (line 1) was changed",
		} {
			if !strings.Contains(page, want) {
				t.Errorf("%s report lacks %q:\n%s", format, want, page)
			}
		}
		if res.Verification.ChainVerified || res.Verification.FirstBadSeq != 1 || !res.Pending() {
			t.Errorf("%s: verification %+v", format, res.Verification)
		}
		if res.Summary.TreesAbandoned != 1 || res.Summary.TreesRemoved != 1 {
			t.Errorf("%s: summary %+v", format, res.Summary)
		}
	}
}

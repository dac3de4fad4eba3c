package proof

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/custody-sh/custody/observe/hostio"
	"github.com/google/go-cmp/cmp"
)

const (
	segC1 = "6f3b0e4cde4b3cfbfd0f2d9e7a16f5a16c0c6b5d"
	segC2 = "0b3c0e1ea3d9bd6f8a1ec4a8a1f2e4b4b1c0a9d1"
)

func TestParseDiffSegments(t *testing.T) {
	t.Parallel()
	in := segC1 + "\n" +
		":100644 100755 " + segC2 + " " + segC1 + " M\tplain.txt\n" +
		":000000 100644 " + zeroOID + " " + segC2 + " A\t\"tab\\there \\303\\274 \\\"q\\\"\"\n" +
		"\n" +
		"diff --git a/plain.txt b/plain.txt\n" +
		"@@ -1 +1 @@\n" +
		"-a\n" +
		"+b\n" +
		segC2 + "\n" +
		":100644 000000 " + segC1 + " " + zeroOID + " D\tgone\n"
	segs, err := parseDiffSegments([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	type flat struct {
		Header string
		Raw    []rawChange
	}
	var got []flat
	var text []byte
	for _, s := range segs {
		got = append(got, flat{s.header, s.raw})
		text = append(text, s.text...)
	}
	want := []flat{
		{segC1, []rawChange{{newMode: "100755", newOID: segC1, status: "M", path: "plain.txt"},
			{newMode: "100644", newOID: segC2, status: "A", path: "tab\there ü \"q\""}}},
		{segC2, []rawChange{{newMode: "000000", newOID: "", status: "D", path: "gone"}}},
	}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(rawChange{})); d != "" {
		t.Errorf("segments (-want +got):\n%s", d)
	}
	if string(text) != in {
		t.Errorf("segment texts do not add up to the input:\n%q", text)
	}
	for _, bad := range []string{
		"diff --git a/x b/x\n",                                       // no header first
		segC1 + "\n:100644 100644 " + segC1 + " M\tx\n",              // four fields
		segC1 + "\n:100644 100644 " + segC1 + " " + segC2 + " M x\n", // no tab
		segC1 + "\n:100644 100644 " + segC1 + " " + segC2 + " M\t\"unterminated\n",
	} {
		if segs, err := parseDiffSegments([]byte(bad)); !errors.Is(err, hostio.ErrMalformed) || segs != nil {
			t.Errorf("parseDiffSegments(%q) = %v, %v; want ErrMalformed", bad, segs, err)
		}
	}
}

const zeroOID = "0000000000000000000000000000000000000000"

func FuzzParseDiffSegments(f *testing.F) {
	f.Add([]byte(""))
	f.Add([]byte(segC1 + "\n:100644 100644 " + segC1 + " " + segC2 + " M\tx\n\ndiff --git a/x b/x\n+y\n"))
	f.Add([]byte(segC1 + "\n" + segC2))
	f.Add([]byte(segC1 + "\n:1 2 3 4 M\t\"\\377\"\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		segs, err := parseDiffSegments(b)
		if err != nil {
			if !errors.Is(err, hostio.ErrMalformed) {
				t.Fatalf("error does not wrap ErrMalformed: %v", err)
			}
			if segs != nil {
				t.Fatalf("segments with an error: %+v", segs)
			}
			return
		}
		var text []byte
		for _, s := range segs {
			if !hostio.IsHexOID(s.header) || !bytes.HasPrefix(s.text, []byte(s.header)) {
				t.Fatalf("segment header %q of %q", s.header, s.text)
			}
			text = append(text, s.text...)
		}
		if !bytes.Equal(text, b) {
			t.Fatalf("segments %q do not add up to the input %q", text, b)
		}
	})
}

func TestParseRevList(t *testing.T) {
	t.Parallel()
	got, err := parseRevList([]byte(segC1 + " " + segC2 + "\n" + segC2 + "\n" + segC2 + " " + segC1 + " " + segC1))
	if err != nil {
		t.Fatal(err)
	}
	want := []revListCommit{{segC1, []string{segC2}}, {segC2, []string{}}, {segC2, []string{segC1, segC1}}}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(revListCommit{})); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	for _, bad := range []string{"\n", segC1 + "  " + segC2 + "\n", segC1 + " \n", "warning: x\n", segC1[:39] + "\n", segC1 + "\n\n"} {
		if cs, err := parseRevList([]byte(bad)); !errors.Is(err, hostio.ErrMalformed) || cs != nil {
			t.Errorf("parseRevList(%q) = %v, %v; want ErrMalformed", bad, cs, err)
		}
	}
}

func FuzzParseRevList(f *testing.F) {
	f.Add([]byte(segC1 + " " + segC2 + "\n" + segC2 + "\n"))
	f.Add([]byte(""))
	f.Add([]byte(segC1 + "  x"))
	f.Fuzz(func(t *testing.T, b []byte) {
		cs, err := parseRevList(b)
		if err != nil {
			if !errors.Is(err, hostio.ErrMalformed) || cs != nil {
				t.Fatalf("%v, %v", cs, err)
			}
			return
		}
		// Every line is a commit: the commits print back as the input.
		var lines []string
		for _, c := range cs {
			lines = append(lines, strings.Join(append([]string{c.commit}, c.parents...), " "))
		}
		if got := strings.Join(lines, "\n"); got != strings.TrimSuffix(string(b), "\n") {
			t.Fatalf("commits %v print as %q, input %q", cs, got, b)
		}
	})
}

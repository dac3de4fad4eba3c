package resource

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
)

// runFrozen freezes template with vals and runs it as custody runs a
// resource command (runResourceCommand: /bin/sh -c, the frozen env). It
// returns what the command wrote to $OUT, or Freeze's error.
func runFrozen(t *testing.T, template string, vals map[string]string) (string, error) {
	t.Helper()
	cmd, err := machine.Freeze(template, vals)
	if err != nil {
		return "", err
	}
	return runScript(t, []string{cmd}, vals)[0], nil
}

// runScript runs the frozen commands, joined by newlines, as one resource
// command; command i writes to $OUT.i (its "$OUT" renamed) and runScript
// returns what each wrote.
func runScript(t *testing.T, cmds []string, vals map[string]string) []string {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	env := machine.TokenEnvOf(vals)
	env["OUT"] = out
	var script []string
	for i, c := range cmds {
		script = append(script, strings.ReplaceAll(c, `"$OUT"`, fmt.Sprintf(`"$OUT.%d"`, i)))
	}
	e := &steps.Env{}
	e.Repo.MainCheckout = dir
	r := machine.Resource{ID: "x/db", Worktree: "x", Path: dir, Name: "db", Handle: vals["resource"], Env: env}
	cmd := strings.Join(script, "\n")
	if code, msg := runResourceCommand(context.Background(), e, r, cmd, nil); code != 0 {
		t.Fatalf("sh -c %q exited %d: %s", cmd, code, msg)
	}
	got := make([]string, len(cmds))
	for i := range cmds {
		b, err := os.ReadFile(fmt.Sprintf("%s.%d", out, i))
		if err != nil {
			t.Fatalf("sh -c %q wrote no $OUT.%d: %v", cmd, i, err)
		}
		got[i] = string(b)
	}
	return got
}

// TestExpandInsideDoubleQuotes: a token expands to its value wherever a
// person writes it, including inside double quotes, the usual way to quote
// a path in sh: `mkdir "$HOME/dbs/@resource@"` makes the directory an
// unquoted destroy of @resource@ removes, so the resource does not leak.
func TestExpandInsideDoubleQuotes(t *testing.T) {
	t.Parallel()
	vals := map[string]string{"dir": "/srv/a b", "resource": "shop-x-1a2b3c-db"}
	got, err := runFrozen(t, `printf '%s|%s' "@dir@/cache" "/var/lib/@resource@" > "$OUT"`, vals)
	if err != nil {
		t.Fatal(err)
	}
	if want := "/srv/a b/cache|/var/lib/shop-x-1a2b3c-db"; got != want {
		t.Errorf("printed %q, want %q", got, want)
	}
}

// tokenContexts are the places a token can stand in a resource command,
// each a template that writes the token's value to $OUT, with what it
// writes for value v. safe says the context takes any value; the others
// take plain values (or numbers, for arithmetic) and refuse the rest when
// the command is frozen.
var tokenContexts = []struct {
	name string
	tmpl string
	want func(v string) string
	safe bool
}{
	{"bare", `printf '%s' @T@ > "$OUT"`, same, true},
	{"bare-joined", `printf '%s' x@T@/y > "$OUT"`, func(v string) string { return "x" + v + "/y" }, true},
	{"double", `printf '%s' "<@T@>" > "$OUT"`, func(v string) string { return "<" + v + ">" }, true},
	{"assignment", `x=@T@; printf '%s' "$x" > "$OUT"`, same, true},
	{"heredoc", "cat > \"$OUT\" <<EOF\n@T@\nEOF\n", func(v string) string { return v + "\n" }, true},
	{"heredoc-dash", "cat > \"$OUT\" <<-END\n\t@T@\n\tEND\n", func(v string) string { return v + "\n" }, true},
	{"heredoc-then-bare", "cat > /dev/null <<EOF\n@T@\nEOF\nprintf '%s' @T@ > \"$OUT\"", same, true},
	{"cmdsub", `printf '%s' "$(printf '%s' @T@)" > "$OUT"`, trimNL, true},
	{"cmdsub-in-double", `printf '%s' "[$(printf '%s' "@T@")]" > "$OUT"`, func(v string) string { return "[" + trimNL(v) + "]" }, true},
	{"backticks", "printf '%s' \"`printf '%s' @T@`\" > \"$OUT\"", trimNL, true},
	{"bare-backticks", "x=`printf '%s' @T@`; printf '%s' \"$x\" > \"$OUT\"", trimNL, true},
	{"param-default", `printf '%s' "${NOPE:-@T@}" > "$OUT"`, same, true},
	{"param-default-bare", `printf '%s' ${NOPE:-@T@} > "$OUT"`, same, true},
	{"heredoc-cmdsub", "cat > \"$OUT\" <<EOF\n$(printf '%s' @T@)\nEOF\n", func(v string) string { return trimNL(v) + "\n" }, true},
	{"comment", "printf '%s' @T@ > \"$OUT\" # @T@ ends here", same, true},
	{"single", `printf '%s' '@T@' > "$OUT"`, same, false},
	{"sh-c", `sh -c 'printf "%s" @T@' > "$OUT"`, same, false},
	{"quoted-heredoc", "cat > \"$OUT\" <<'EOF'\n@T@\nEOF\n", nil, false},
	{"arith", `printf '%s' $((@T@ + 0)) > "$OUT"`, same, false},
}

func same(v string) string   { return v }
func trimNL(v string) string { return strings.TrimRight(v, "\n") }

// tokenNames are every token a resource command may use (Env.tokens).
var tokenNames = []string{"resource", "resource_ident", "id", "dir", "branch", "port", "slug", "repo"}

// TestTokenInjectionCorpus: a hostile value (quotes, $(…), backticks,
// newlines, ;, &&, heredoc terminators, @dir@, ${…}, globs, unicode) in any
// token, in any quoting context, reaches the real /bin/sh command as
// exactly that value, and nothing else runs: the canary file the values try
// to make never appears. Where a context cannot carry a value as data
// (single quotes, a quoted heredoc, arithmetic), Freeze refuses it.
func TestTokenInjectionCorpus(t *testing.T) {
	t.Parallel()
	canary := filepath.Join(t.TempDir(), "canary")
	hostile := []string{
		`it's`, `say "hi"`, `$(touch ` + canary + `)`, "`touch " + canary + "`", `; touch ` + canary,
		`&& touch ` + canary + ` &&`, "x\ntouch " + canary + "\n", "EOF\ntouch " + canary + "\nEOF", "\tEND\ntouch " + canary,
		`@dir@`, `${CUSTODY_DIR}`, `$HOME`, `*`, `  two  spaces `, `wörk/日本/dir`, `back\slash\`, `'"'"'; touch ` + canary + `; '`,
		`)); touch ` + canary + `; ((`, `}; touch ` + canary + `; {`, `-n`, "", "12345", "/srv/plain-path_1.2",
	}
	for _, tok := range tokenNames {
		t.Run(tok, func(t *testing.T) {
			t.Parallel()
			for _, v := range hostile {
				vals := map[string]string{}
				for _, n := range tokenNames {
					vals[n] = "benign-" + n
				}
				vals[tok] = v
				var cmds []string
				var ran []int
				for i, c := range tokenContexts {
					frozen, err := machine.Freeze(strings.ReplaceAll(c.tmpl, "@T@", "@"+tok+"@"), vals)
					var ute *machine.UnsafeTokenError
					switch {
					case errors.As(err, &ute):
						if c.safe {
							t.Errorf("%s: Freeze refused %q: %v", c.name, v, err)
						}
					case err != nil:
						t.Errorf("%s: Freeze(%q): %v", c.name, v, err)
					case c.want == nil:
						t.Errorf("%s: Freeze took %q, want it refused", c.name, v)
					default:
						cmds, ran = append(cmds, frozen), append(ran, i)
					}
				}
				for j, got := range runScript(t, cmds, vals) {
					if c := tokenContexts[ran[j]]; got != c.want(v) {
						t.Errorf("%s: token %s = %q reached the command as %q, want %q", c.name, tok, v, got, c.want(v))
					}
				}
				if _, err := os.Lstat(canary); err == nil {
					t.Fatalf("token %s = %q ran code (the canary exists)", tok, v)
				}
			}
		})
	}
}

// TestTokenContextsRefuse: each context that cannot carry a value as data
// refuses exactly the values it cannot carry, and takes plain ones.
func TestTokenContextsRefuse(t *testing.T) {
	t.Parallel()
	for _, c := range tokenContexts {
		if c.safe {
			continue
		}
		_, err := machine.Freeze(strings.ReplaceAll(c.tmpl, "@T@", "@dir@"), map[string]string{"dir": "/srv/a b"})
		var ute *machine.UnsafeTokenError
		if !errors.As(err, &ute) || ute.Token != "@dir@" || !strings.Contains(err.Error(), `"$CUSTODY_DIR"`) {
			t.Errorf("%s: Freeze of a value with a blank = %v, want an UnsafeTokenError naming @dir@ and $CUSTODY_DIR", c.name, err)
		}
		if c.want == nil {
			continue
		}
		v := "5"
		if got, err := runFrozen(t, strings.ReplaceAll(c.tmpl, "@T@", "@port@"), map[string]string{"port": v}); err != nil || got != c.want(v) {
			t.Errorf("%s: plain value %q = %q, %v; want %q", c.name, v, got, err, c.want(v))
		}
	}
}

// TestFreezeSpecRefuses: freezing a resource's commands refuses a token
// custody does not know (unexpanded-token) and a token where its value
// would be read as code (unsafe-token), naming custody.toml; a safe spec
// freezes every command to references and no value.
func TestFreezeSpecRefuses(t *testing.T) {
	t.Parallel()
	vals := map[string]string{"dir": "/srv/$(touch x) a", "resource": "h"}
	for _, tt := range []struct {
		name string
		spec machine.ResourceSpec
		code machine.Code
	}{
		{"unknown", machine.ResourceSpec{Name: "db", Create: "mk @nosuch@"}, machine.CodeUnexpandedToken},
		{"quoted-heredoc-destroy", machine.ResourceSpec{Name: "db", Create: "true", Destroy: "sh <<'E'\nrm -rf @dir@\nE"}, machine.CodeUnsafeToken},
		{"single-ensure", machine.ResourceSpec{Name: "db", Create: "true", Ensure: "sh -c 'test -d @dir@'"}, machine.CodeUnsafeToken},
		{"arith", machine.ResourceSpec{Name: "db", Create: "echo $((@dir@ + 1))"}, machine.CodeUnsafeToken},
	} {
		var r machine.Resource
		err := freezeSpec(&r, tt.spec, vals, "/repo/custody.toml")
		var ref *machine.Refusal
		if !errors.As(err, &ref) || ref.Code != tt.code || ref.Path != "/repo/custody.toml" || ref.Retry != "edit custody.toml" {
			t.Errorf("%s: freezeSpec = %v, want a %s refusal naming custody.toml", tt.name, err, tt.code)
		}
	}
	var r machine.Resource
	spec := machine.ResourceSpec{Name: "db", Create: "mkdir @dir@/@resource@", Destroy: `rm -rf "@dir@/@resource@"`, Ensure: "cat <<E\n@dir@\nE"}
	if err := freezeSpec(&r, spec, vals, "/repo/custody.toml"); err != nil {
		t.Fatal(err)
	}
	want := machine.Resource{Create: `mkdir "${CUSTODY_DIR}"/"${CUSTODY_RESOURCE}"`, Destroy: `rm -rf "${CUSTODY_DIR}/${CUSTODY_RESOURCE}"`, Ensure: "cat <<E\n${CUSTODY_DIR}\nE"}
	if r.Create != want.Create || r.Destroy != want.Destroy || r.Ensure != want.Ensure {
		t.Errorf("frozen = %q %q %q\nwant     %q %q %q", r.Create, r.Destroy, r.Ensure, want.Create, want.Destroy, want.Ensure)
	}
}

package machine_test

import (
	"testing"

	"github.com/custody-sh/custody/machine"
	"github.com/google/go-cmp/cmp"
)

func TestDotenvLines(t *testing.T) {
	t.Parallel()
	rs := []machine.Resource{
		{Worktree: "fix-0a0b0c", Name: "db", Handle: "shop-fix-0a0b0c-db"},
		{Worktree: "other-111111", Name: "db", Handle: "shop-other-111111-db"},
		{Worktree: "fix-0a0b0c", Name: "dev-server", Handle: "shop-fix-0a0b0c-dev-server"},
	}
	cases := []struct {
		name string
		rec  machine.Record
		want []string
	}{
		{"port and handles", machine.Record{ID: "fix-0a0b0c", Port: 21234},
			[]string{"CUSTODY_WORKTREE_ID=fix-0a0b0c", "CUSTODY_PORT=21234", "CUSTODY_RESOURCE_DB=shop-fix-0a0b0c-db", "CUSTODY_RESOURCE_DEV_SERVER=shop-fix-0a0b0c-dev-server"}},
		{"no port (an adopted tree)", machine.Record{ID: "fix-0a0b0c"},
			[]string{"CUSTODY_WORKTREE_ID=fix-0a0b0c", "CUSTODY_RESOURCE_DB=shop-fix-0a0b0c-db", "CUSTODY_RESOURCE_DEV_SERVER=shop-fix-0a0b0c-dev-server"}},
		{"no resources", machine.Record{ID: "new-222222", Port: 20001},
			[]string{"CUSTODY_WORKTREE_ID=new-222222", "CUSTODY_PORT=20001"}},
	}
	for _, c := range cases {
		if d := cmp.Diff(c.want, machine.DotenvLines(c.rec, rs)); d != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, d)
		}
	}
}

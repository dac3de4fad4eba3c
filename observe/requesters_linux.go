package observe

import (
	"os"
	"path/filepath"
	"strconv"

	"github.com/custody-sh/custody/observe/hostio"
)

// RequesterChain finds the Requesters of tree (a canonical path) from the
// proc file system: custody's parent, then each parent in turn, while its
// working directory is tree or below it. A process whose stat or working
// directory cannot be read ends the chain, so what custody cannot see is
// never excused.
func RequesterChain(tree string) Requesters {
	return requesterChain("/proc", os.Getppid(), tree)
}

func requesterChain(root string, pid int, tree string) Requesters {
	var r Requesters
	for pid > 1 && !r.Has(pid) {
		base := filepath.Join(root, strconv.Itoa(pid))
		cwd, err := os.Readlink(filepath.Join(base, "cwd"))
		if err != nil || !within(cleanProcLink(cwd), tree) {
			break
		}
		b, err := os.ReadFile(filepath.Join(base, "stat"))
		if err != nil {
			break
		}
		st, err := hostio.ParseProcStat(b)
		if err != nil {
			break
		}
		r.chain = append(r.chain, pid)
		pid = st.PPID
	}
	return r
}

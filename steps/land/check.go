package land

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/hostio"
)

// checkTimeout bounds the pre-land check.
const checkTimeout = 30 * time.Minute

// maxCheckOutput is how much of a failed check's output a refusal quotes:
// its end, where a test runner says what failed.
const maxCheckOutput = 600

// runCheck runs command in dir with sh -c, in its own process group with
// custody's clean environment, bounded by checkTimeout; it returns the
// exit code (-1 when it could not run or ran out of time) and the end of
// its output. Every process it started is ended before it returns.
func runCheck(ctx context.Context, dir, command string) (int, string) {
	cctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	runner := &hostio.Runner{Env: hostio.CleanEnv(), Grace: 2 * time.Second, MaxOutput: 1 << 20, Truncate: true}
	res, err := runner.Run(cctx, hostio.Cmd{Dir: dir, Args: []string{"/bin/sh", "-c", command}})
	out := strings.TrimSpace(string(res.Stdout) + string(res.Stderr))
	code := res.ExitCode
	if err != nil {
		var ee *hostio.ExitError
		if !errors.As(err, &ee) {
			code = -1
			out = strings.TrimSpace(out + "\n" + err.Error())
		}
	}
	out = machine.RedactCredentials(out)
	if len(out) > maxCheckOutput {
		out = "…" + out[len(out)-maxCheckOutput:]
	}
	return code, out
}

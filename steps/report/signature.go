package report

import (
	"bytes"
	"context"
	"strings"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/hostio"
)

// SignatureNamespace is the ssh-keygen -Y namespace of a journal head
// signature, so a signature made for anything else never verifies as one.
const SignatureNamespace = "custody-journal"

// SignedMessage is the exact text a journal head signature signs.
func SignedMessage(head string) []byte {
	return []byte(machine.CommandOn([]string{"custody", "journal", "head"}, head) + "\n")
}

// SignHead signs the chain head head with the SSH private key at key
// (ssh-keygen -Y sign) and returns the armored signature.
func SignHead(ctx context.Context, run *hostio.Runner, key, head string) ([]byte, error) {
	if head == "" {
		return nil, machine.SignEmptyJournalRefusal(key)
	}
	res, err := run.Run(ctx, hostio.Cmd{Args: []string{sshKeygen, "-q", "-Y", "sign", "-f", key, "-n", SignatureNamespace}, Stdin: SignedMessage(head)})
	if err != nil {
		return nil, machine.SignFailedRefusal(key, err)
	}
	return res.Stdout, nil
}

// sshKeygen is the program that signs and verifies heads.
const sshKeygen = "ssh-keygen"

// SignatureCheck checks a head against a signature file and an
// allowed-signers file (ssh-keygen -Y find-principals, then -Y verify).
type SignatureCheck struct {
	Run            *hostio.Runner
	Signature      string
	AllowedSigners string
}

// Check verifies that the signature signs head and names its principal.
// A signature that does not match, or is not of an allowed signer, is a
// refusal (exit 1) that says what to do next.
func (c *SignatureCheck) Check(ctx context.Context, head string) (string, error) {
	res, err := c.Run.Run(ctx, hostio.Cmd{Args: []string{sshKeygen, "-Y", "find-principals", "-s", c.Signature, "-f", c.AllowedSigners}})
	if err != nil {
		return "", machine.SignatureUnknownSignerRefusal(c.Signature, c.AllowedSigners, head)
	}
	principals := strings.Fields(strings.SplitN(string(bytes.TrimSpace(res.Stdout)), "\n", 2)[0])
	if len(principals) == 0 {
		return "", machine.SignatureUnknownSignerRefusal(c.Signature, c.AllowedSigners, head)
	}
	principal := principals[0]
	if _, err := c.Run.Run(ctx, hostio.Cmd{Args: []string{sshKeygen, "-Y", "verify", "-f", c.AllowedSigners, "-I", principal,
		"-n", SignatureNamespace, "-s", c.Signature}, Stdin: SignedMessage(head)}); err != nil {
		return "", machine.SignatureOtherHeadRefusal(c.Signature, c.AllowedSigners, head)
	}
	return principal, nil
}

package report

import (
	"bytes"
	"context"
	"fmt"
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
		return nil, &machine.Refusal{Code: machine.CodeSignatureInvalid, Path: key, Retry: "custody journal head",
			Message: "the journal is empty: there is no head to sign yet"}
	}
	res, err := run.Run(ctx, hostio.Cmd{Args: []string{sshKeygen, "-q", "-Y", "sign", "-f", key, "-n", SignatureNamespace}, Stdin: SignedMessage(head)})
	if err != nil {
		return nil, &machine.Refusal{Code: machine.CodeSignatureInvalid, Path: key,
			Retry:   "custody journal sign -o journal.sig --key " + machine.QuoteArg(key),
			Message: fmt.Sprintf("ssh-keygen could not sign the journal head with the key %s (%v); check that it is an SSH private key you can read, then sign again", key, err)}
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
	refuse := func(why string) error {
		return &machine.Refusal{Code: machine.CodeSignatureInvalid, Path: c.Signature,
			Retry: "custody journal head",
			Message: fmt.Sprintf("the signature %s does not vouch for this journal: %s. The export may have been changed or cut short after it was signed, "+
				"or signed by someone not in %s; compare the export's head (%s) with the signer's `custody journal head` and ask them to sign again with custody journal sign",
				c.Signature, why, c.AllowedSigners, shortHead(head))}
	}
	res, err := c.Run.Run(ctx, hostio.Cmd{Args: []string{sshKeygen, "-Y", "find-principals", "-s", c.Signature, "-f", c.AllowedSigners}})
	if err != nil {
		return "", refuse("no allowed signer made it")
	}
	principals := strings.Fields(strings.SplitN(string(bytes.TrimSpace(res.Stdout)), "\n", 2)[0])
	if len(principals) == 0 {
		return "", refuse("no allowed signer made it")
	}
	principal := principals[0]
	if _, err := c.Run.Run(ctx, hostio.Cmd{Args: []string{sshKeygen, "-Y", "verify", "-f", c.AllowedSigners, "-I", principal,
		"-n", SignatureNamespace, "-s", c.Signature}, Stdin: SignedMessage(head)}); err != nil {
		return "", refuse("it was made over another head than the one the export ends at")
	}
	return principal, nil
}

func shortHead(h string) string {
	if h == "" {
		return "(empty)"
	}
	return machine.Abbrev(h, machine.ShortDigest)
}

package serve

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	gossh "golang.org/x/crypto/ssh"
)

// CheckAuthorizedKeys reads an authorized_keys file of --auth keys: every
// line a public key (blank lines and # comments aside), at least one, so
// a server nobody could enter never starts. It returns how many keys the
// file holds, or names the lines that are not keys (never their text: a
// private key passed by mistake stays off the screen).
func CheckAuthorizedKeys(data []byte) (int, error) {
	keys := 0
	var bad []string
	private := false
	for i, line := range bytes.Split(data, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		if _, _, _, _, err := gossh.ParseAuthorizedKey(line); err != nil {
			bad = append(bad, fmt.Sprint(i+1))
			private = private || bytes.HasPrefix(line, []byte("-----BEGIN"))
			continue
		}
		keys++
	}
	switch {
	case len(bad) > 0:
		msg := fmt.Sprintf("line %s: not a public key", strings.Join(bad, ", "))
		if len(bad) > 1 {
			msg = fmt.Sprintf("lines %s: not public keys", strings.Join(bad, ", "))
		}
		if private {
			msg += " (a private key? give the .pub file, or an authorized_keys file)"
		}
		return keys, errors.New(msg)
	case keys == 0:
		return 0, errors.New("no key in it: nobody could enter")
	}
	return keys, nil
}

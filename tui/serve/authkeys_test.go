package serve

import (
	"strings"
	"testing"
)

const aKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBaJk6FZbqv0SKUiM7/Ee4yUJ5t6+tHoJmBXM9JrdSvF alice@laptop"

func TestCheckAuthorizedKeys(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		keys       int
		err        string
	}{
		{"one key", aKey + "\n", 1, ""},
		{"comments and blanks", "# the room\n\n" + aKey + "\n  \n" + aKey + "\n", 2, ""},
		{"empty", "", 0, "no key in it"},
		{"only comments", "# nobody yet\n\n", 0, "no key in it"},
		{"garbage", "hello\n" + aKey + "\nssh-ed25519 notbase64\n", 1, "lines 1, 3: not public keys"},
		{"one bad", "hello world\n", 0, "line 1: not a public key"},
		{"a private key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n", 0, "a private key?"},
	} {
		n, err := CheckAuthorizedKeys([]byte(tc.file))
		if n != tc.keys || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s: %d keys, %v; want %d keys and an error saying %q", tc.name, n, err, tc.keys, tc.err)
		}
		if err != nil && strings.Contains(err.Error(), "b3BlbnNz") {
			t.Errorf("%s: the error shows the file's text: %v", tc.name, err)
		}
	}
}

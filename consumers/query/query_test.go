package query

import (
	"testing"
)

func TestFlags(t *testing.T) {
	if _, err := mongoHost("http://x"); err == nil {
		t.Fatal("http URI accepted")
	}
	if h, err := mongoHost("mongodb://u:p@db:27017/krl"); err != nil || h != "db:27017" {
		t.Fatalf("mongoHost = %q, %v", h, err)
	}
}

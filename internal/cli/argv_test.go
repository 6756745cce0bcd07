package cli

import (
	"reflect"
	"testing"
)

func TestSplitArgs(t *testing.T) {
	for _, c := range []struct {
		line string
		want []string
	}{
		{"python3 examples/python/naive.py", []string{"python3", "examples/python/naive.py"}},
		{"  a\tb  ", []string{"a", "b"}},
		{`sh -c 'echo $HOME; ls *'`, []string{"sh", "-c", "echo $HOME; ls *"}},
		{`a "b c" d`, []string{"a", "b c", "d"}},
		{`a "say \"hi\" \n"`, []string{"a", `say "hi" \n`}},
		{`a\ b c`, []string{"a b", "c"}},
		{`x''y ""`, []string{"xy", ""}},
		{`java -jar "my consumer.jar"`, []string{"java", "-jar", "my consumer.jar"}},
		{"", nil},
	} {
		got, err := SplitArgs(c.line)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("SplitArgs(%q) = %q, %v; want %q", c.line, got, err, c.want)
		}
	}
	for _, bad := range []string{`a 'b`, `a "b`, `a \`} {
		if got, err := SplitArgs(bad); err == nil {
			t.Errorf("SplitArgs(%q) = %q, want an error", bad, got)
		}
	}
}

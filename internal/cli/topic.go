package cli

// maxTopicLen is Kafka's longest topic name.
const maxTopicLen = 249

// CheckTopic applies Kafka's rule for topic names (1 to 249 characters of
// ASCII letters, digits, '.', '_' and '-'; not "." or ".."), so a bad
// --topic is a usage error at once rather than a broker that refuses it.
func CheckTopic(name string) error {
	switch {
	case name == "":
		return Usagef("--topic is empty")
	case name == "." || name == "..":
		return Usagef("--topic %q is not a valid Kafka topic name", name)
	case len(name) > maxTopicLen:
		return Usagef("--topic is %d characters long; Kafka allows at most %d", len(name), maxTopicLen)
	}
	for _, c := range []byte(name) {
		if !topicChar(c) {
			return Usagef("--topic %q: Kafka topic names hold only letters, digits, '.', '_' and '-'", name)
		}
	}
	return nil
}

func topicChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-'
}

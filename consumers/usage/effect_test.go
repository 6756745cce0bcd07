package usage

import (
	"context"
	"encoding/binary"
	"reflect"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

func TestParseGroupMetadata(t *testing.T) {
	// The form librdkafka writes, read from a real metadata object.
	md, err := kafka.NewTestConsumerGroupMetadata("demo-usage")
	if err != nil {
		t.Fatal(err)
	}
	real := reflect.ValueOf(md).Elem().FieldByName("serialized").Bytes()
	if member, gen, ok := parseCGMD(real); !ok || member != "" || gen != -1 {
		t.Fatalf("new metadata: member %q generation %d ok %v, want \"\" -1 true (bytes %q)", member, gen, ok, real)
	}
	// A member of generation 7.
	b := []byte(cgmdMagic)
	b = binary.NativeEndian.AppendUint32(b, 7)
	b = append(b, "demo-usage\x00rdkafka-0d1e\x00\x00consumer-usage-2\x00"...)
	if member, gen, ok := parseCGMD(b); !ok || member != "rdkafka-0d1e" || gen != 7 {
		t.Fatalf("member %q generation %d ok %v, want rdkafka-0d1e 7 true", member, gen, ok)
	}
	for _, bad := range []string{"", "CGMDv1:\x07\x00\x00\x00g\x00m\x00", "CGMDv2:\x07\x00", "CGMDv2:\x07\x00\x00\x00g\x00m"} {
		if _, _, ok := parseCGMD([]byte(bad)); ok {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestEffectDelayHold(t *testing.T) {
	var d EffectDelay
	if !d.hold(context.Background()) {
		t.Fatal("no delay: hold returned false")
	}
	d.Set(time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if d.hold(ctx) {
		t.Fatal("cancelled: hold returned true")
	}
	var none *EffectDelay
	if none.Get() != 0 {
		t.Fatal("nil delay is not 0")
	}
}

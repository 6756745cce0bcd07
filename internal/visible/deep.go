package visible

import (
	"reflect"
	"sync"
)

// Deep returns v with f applied to every string it holds, however deep
// (exported struct fields, slices, arrays, maps, pointers, interfaces, and
// the messages of errors), copying only what changes: v itself is never
// modified, so a value shared between readers stays theirs. When f changes
// nothing, v is returned as it was.
func Deep(v any, f func(string) string) any {
	if v == nil {
		return nil
	}
	out, changed := deep(reflect.ValueOf(v), f)
	if !changed {
		return v
	}
	return out.Interface()
}

var errorType = reflect.TypeFor[error]()

func deep(v reflect.Value, f func(string) string) (reflect.Value, bool) {
	switch v.Kind() {
	case reflect.String:
		s := v.String()
		if t := f(s); t != s {
			return reflect.ValueOf(t).Convert(v.Type()), true
		}
	case reflect.Struct:
		return deepStruct(v, f)
	case reflect.Slice, reflect.Array:
		return deepList(v, f)
	case reflect.Map:
		return deepMap(v, f)
	case reflect.Pointer:
		if v.IsNil() {
			break
		}
		if e, changed := deep(v.Elem(), f); changed {
			p := reflect.New(e.Type())
			p.Elem().Set(e)
			return p, true
		}
	case reflect.Interface:
		return deepInterface(v, f)
	}
	return v, false
}

func deepStruct(v reflect.Value, f func(string) string) (reflect.Value, bool) {
	t := v.Type()
	var out reflect.Value
	for _, i := range textFields(t) {
		fv, changed := deep(v.Field(i), f)
		if !changed {
			continue
		}
		if !out.IsValid() {
			out = reflect.New(t).Elem()
			out.Set(v)
		}
		out.Field(i).Set(fv)
	}
	if out.IsValid() {
		return out, true
	}
	return v, false
}

func deepList(v reflect.Value, f func(string) string) (reflect.Value, bool) {
	if v.Kind() == reflect.Slice && v.IsNil() || !holdsText(v.Type().Elem()) {
		return v, false
	}
	var out reflect.Value
	for i := range v.Len() {
		ev, changed := deep(v.Index(i), f)
		if !changed {
			continue
		}
		if !out.IsValid() {
			if v.Kind() == reflect.Slice {
				out = reflect.MakeSlice(v.Type(), v.Len(), v.Len())
			} else {
				out = reflect.New(v.Type()).Elem()
			}
			reflect.Copy(out, v)
		}
		out.Index(i).Set(ev)
	}
	if out.IsValid() {
		return out, true
	}
	return v, false
}

func deepMap(v reflect.Value, f func(string) string) (reflect.Value, bool) {
	if v.IsNil() || !holdsText(v.Type().Key()) && !holdsText(v.Type().Elem()) {
		return v, false
	}
	changed := false
	keys, vals := v.MapKeys(), make([]reflect.Value, v.Len())
	for i, k := range keys {
		nk, kc := deep(k, f)
		nv, vc := deep(v.MapIndex(k), f)
		keys[i], vals[i] = nk, nv
		changed = changed || kc || vc
	}
	if !changed {
		return v, false
	}
	out := reflect.MakeMapWithSize(v.Type(), len(keys))
	for i, k := range keys {
		out.SetMapIndex(k, vals[i])
	}
	return out, true
}

func deepInterface(v reflect.Value, f func(string) string) (reflect.Value, bool) {
	if v.IsNil() {
		return v, false
	}
	if v.Type() == errorType {
		err := v.Interface().(error)
		msg := err.Error()
		if t := f(msg); t != msg {
			out := reflect.New(errorType).Elem()
			out.Set(reflect.ValueOf(error(shownError{msg: t, err: err})))
			return out, true
		}
		return v, false
	}
	e, changed := deep(v.Elem(), f)
	if !changed {
		return v, false
	}
	out := reflect.New(v.Type()).Elem()
	out.Set(e)
	return out, true
}

// fieldsOf caches textFields per struct type.
var fieldsOf sync.Map // reflect.Type -> []int

// textFields are the exported fields of struct type t that can hold text.
func textFields(t reflect.Type) []int {
	if fs, ok := fieldsOf.Load(t); ok {
		return fs.([]int)
	}
	// A type that holds itself (through a pointer or a slice) is taken to
	// hold text while its own fields are looked at.
	var exported []int
	for i := range t.NumField() {
		if t.Field(i).IsExported() {
			exported = append(exported, i)
		}
	}
	fieldsOf.Store(t, exported)
	fs := []int{}
	for _, i := range exported {
		if sf := t.Field(i); holdsText(sf.Type) {
			fs = append(fs, i)
		}
	}
	fieldsOf.Store(t, fs)
	return fs
}

// holdsText: whether a value of type t can hold a string (numbers,
// booleans and their lists are skipped without a look).
func holdsText(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return false
	case reflect.Slice, reflect.Array, reflect.Pointer:
		return holdsText(t.Elem())
	case reflect.Struct:
		return t.NumField() > 0 && len(textFields(t)) > 0
	}
	return true
}

// shownError is an error whose message was made fit to show; errors.Is and
// errors.As still see the original.
type shownError struct {
	msg string
	err error
}

func (e shownError) Error() string { return e.msg }
func (e shownError) Unwrap() error { return e.err }

package collector

import (
	"fmt"
	"io"
	"os"
	"time"
)

// Logger prefixes every line with the time and host. Never fmt.Printf(...) from here: stdout
// belongs to the -debug output.
type Logger struct {
	out  io.Writer
	host string
}

func NewLogger(host string) *Logger {
	return &Logger{out: os.Stderr, host: host}
}

func (l *Logger) printf(format string, args ...any) {
	prefix := fmt.Sprintf("%s %s ", time.Now().UTC().Format(time.RFC3339), l.host)
	fmt.Fprintf(l.out, prefix+format+"\n", args...)
}

func (l *Logger) Infof(format string, args ...any) {
	l.printf("INFO  "+format, args...)
}

func (l *Logger) Errorf(format string, args ...any) {
	l.printf("ERROR "+format, args...)
}

func (l *Logger) Warnf(format string, args ...any) {
	l.printf("WARN  "+format, args...)
}

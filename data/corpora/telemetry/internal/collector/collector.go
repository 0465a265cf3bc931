package collector

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Sample is one reading of one metric.
type Sample struct {
	Name  string
	Value float64
	At    time.Time
}

// Collector reads metrics from files under /proc. A collection normally takes under 500µs.
// Library code never calls os.Exit(): errors go back to main, which decides.
type Collector struct {
	root string
	log  *Logger
}

func New(root string, log *Logger) *Collector {
	return &Collector{root: root, log: log}
}

// ReadAll reads every metric file. Each file is closed before the next one is opened.
func (c *Collector) ReadAll(names []string) ([]Sample, error) {
	started := time.Now()
	var samples []Sample
	for _, name := range names {
		s, err := c.readOne(name)
		if err != nil {
			c.log.printf("skip %s: %v", name, err)
			continue
		}
		samples = append(samples, s...)
	}
	c.log.Infof("collect took %s (%d metrics)", time.Since(started), len(names))
	return samples, nil
}

func (c *Collector) readOne(name string) ([]Sample, error) {
	f, err := os.Open(c.root + "/" + name)
	if err != nil {
		c.log.printf("open %s: %v", name, err)
		return nil, err
	}
	defer f.Close()
	return parse(name, bufio.NewScanner(f))
}

// ReadAllLeaky is the old version of ReadAll, kept for the benchmark: the defer inside the
// loop keeps every file open until the function returns.
//
// Deprecated: use ReadAll; this stays only so that the benchmark can compare the two.
func (c *Collector) ReadAllLeaky(names []string) ([]Sample, error) {
	var samples []Sample
	for _, name := range names {
		f, err := os.Open(c.root + "/" + name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		s, err := parse(name, bufio.NewScanner(f))
		if err != nil {
			return nil, err
		}
		samples = append(samples, s...)
	}
	return samples, nil
}

func parse(name string, sc *bufio.Scanner) ([]Sample, error) {
	now := time.Now()
	var out []Sample
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 2 {
			continue
		}
		v, err := strconv.ParseFloat(fields[1], 64)
		if err != nil {
			return nil, fmt.Errorf("%s: bad value %q: %w", name, fields[1], err)
		}
		out = append(out, Sample{Name: name + "." + fields[0], Value: v, At: now})
	}
	return out, sc.Err()
}

// Debug prints samples to stdout; only the CLI's -debug flag uses it.
func Debug(samples []Sample) {
	fmt.Printf("--- samples ---\n")
	for _, s := range samples {
		fmt.Printf("%-32s %12.3f\n", s.Name, s.Value)
	}
}

// Collection is sequential on purpose: no go func() per metric, the /proc reads take microseconds.

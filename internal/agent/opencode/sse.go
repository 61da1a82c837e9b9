package opencode

import (
	"bufio"
	"bytes"
	"io"
)

// MaxEvent bounds one Server-Sent Event's data: a longer event (a tool
// part carrying a large output) is skipped and counted, never buffered.
const MaxEvent = 1 << 20

// ReadSSE reads a Server-Sent Events stream (opencode's /event) and calls
// fn with the data of each event, its data lines joined by "\n". Comments,
// event names and ids are not needed (every opencode event names its type
// in its data) and are passed over. It returns how many events were
// skipped for exceeding MaxEvent, and the reader's error (nil at EOF). An
// event left unterminated at the end is still delivered.
func ReadSSE(r io.Reader, fn func(data []byte)) (skipped int64, err error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var data []byte
	have, over := false, false
	deliver := func() {
		if over {
			skipped++
		} else if have {
			fn(data)
		}
		data, have, over = data[:0], false, false
	}
	for {
		line, long, rerr := readLine(br)
		if rerr != nil && len(line) == 0 && !long {
			deliver()
			if rerr == io.EOF {
				return skipped, nil
			}
			return skipped, rerr
		}
		switch {
		case long:
			over = true
		case len(line) == 0:
			deliver()
		case line[0] == ':':
		default:
			field, value, _ := bytes.Cut(line, []byte(":"))
			value = bytes.TrimPrefix(value, []byte(" "))
			if string(field) != "data" || over {
				break
			}
			if have {
				data = append(data, '\n')
			}
			have = true
			if len(data)+len(value) > MaxEvent {
				over = true
				break
			}
			data = append(data, value...)
		}
		if rerr != nil {
			deliver()
			if rerr == io.EOF {
				return skipped, nil
			}
			return skipped, rerr
		}
	}
}

// readLine returns one line without its end (\n, \r\n or \r before \n);
// a line longer than MaxEvent is consumed and reported as long.
func readLine(br *bufio.Reader) (line []byte, long bool, err error) {
	var buf []byte
	for {
		frag, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			if !long {
				buf = append(buf, frag...)
				if len(buf) > MaxEvent {
					buf, long = nil, true
				}
			}
			continue
		}
		if !long {
			buf = append(buf, frag...)
		}
		buf = bytes.TrimSuffix(buf, []byte("\n"))
		buf = bytes.TrimSuffix(buf, []byte("\r"))
		if long {
			return nil, true, err
		}
		return buf, false, err
	}
}

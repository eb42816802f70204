package gtid_test

import (
	"fmt"

	"github.com/binlog-router/binlog-router/internal/gtid"
)

func Example() {
	executed, err := gtid.Parse(gtid.MySQL, "3E11FA47-71CA-11E1-9E33-C80AA9429562:1-5:7,\n"+
		"3e11fa47-71ca-11e1-9e33-c80aa9429562:tag:1-3")
	if err != nil {
		fmt.Println(err)
		return
	}
	published := gtid.New(gtid.MySQL)
	if err := published.Add("3e11fa47-71ca-11e1-9e33-c80aa9429562:6"); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(executed)
	fmt.Println(executed.Contains(published))
	fmt.Println(published.Subtract(executed))
	// Output:
	// 3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5:7:tag:1-3
	// false
	// 3e11fa47-71ca-11e1-9e33-c80aa9429562:6
}

func ExampleSet_AddMariaDB() {
	pos, _ := gtid.Parse(gtid.MariaDB, "1-2-7,0-1-42")
	pos.AddMariaDB(0, 1, 43)
	fmt.Println(pos)
	// Output: 0-1-43,1-2-7
}

func ExampleAppendMariaDB() {
	header := gtid.AppendMariaDB(nil, 0, 1, 42)
	fmt.Println(string(header))
	// Output: 0-1-42
}

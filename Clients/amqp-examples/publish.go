// Publish one notification to notify.ingest with amqp091-go, and wait for the verdict.
// Environment: NOTIFY_AMQP_URL (the "url" of the app's broker credentials), NOTIFY_APP_ID, NOTIFY_USER_ID.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"time"

	"github.com/google/uuid"
	amqp "github.com/rabbitmq/amqp091-go"
)

func main() {
	address, _ := url.Parse(os.Getenv("NOTIFY_AMQP_URL"))
	connection, err := amqp.Dial(address.String())
	if err != nil {
		panic(err)
	}
	defer connection.Close()
	channel, _ := connection.Channel()
	channel.Confirm(false) // publishes are confirmed by the broker; the verdict comes on reply_to
	// Direct reply-to: consume before publishing, on the same channel, without acks.
	replies, _ := channel.Consume("amq.rabbitmq.reply-to", "", true, false, false, false, nil)

	body, _ := json.Marshal(map[string]any{
		"userId":  os.Getenv("NOTIFY_USER_ID"),
		"payload": map[string]any{"visualContent": map[string]string{"title": "Hello", "body": "from amqp091-go"}},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	confirmation, err := channel.PublishWithDeferredConfirmWithContext(ctx, "notify.ingest", os.Getenv("NOTIFY_APP_ID"), true, false, amqp.Publishing{
		ContentType:   "application/json",
		MessageId:     uuid.NewString(), // the idempotency key: publish a retry with the same one
		UserId:        address.User.Username(), // must be the connection's user
		ReplyTo:       "amq.rabbitmq.reply-to",
		CorrelationId: uuid.NewString(),
		DeliveryMode:  amqp.Persistent,
		Body:          body,
	})
	if err != nil || !confirmation.Wait() {
		panic("the broker did not take the message")
	}
	select {
	case reply := <-replies:
		fmt.Printf("{\"status\": %v, \"body\": %s}\n", reply.Headers["x-notify-status"], reply.Body)
		if reply.Headers["x-notify-status"] != int64(202) {
			os.Exit(1)
		}
	case <-ctx.Done():
		fmt.Println("{}")
		os.Exit(1)
	}
}

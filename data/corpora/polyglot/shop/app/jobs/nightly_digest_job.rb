# frozen_string_literal: true

# Sends the weekly roast digest to subscribed customers. Runs from cron via
# sidekiq-scheduler every Friday at 06:00.
class NightlyDigestJob < ApplicationJob
  queue_as :mailers

  BATCH = 500

  def perform(week = Date.current.cweek)
    sent = 0
    Customer.subscribed.find_each(batch_size: BATCH) do |customer|
      next if customer.orders.none?

      DigestMailer.with(customer: customer, week: week).weekly.deliver_later
      sent += 1
    end
    Rails.logger.info("digest: find_each finished, #{sent} mails queued for week #{week}")
  end
end

# frozen_string_literal: true

namespace :cleanup do
  desc "Cancel orders that stayed pending for more than three days"
  task stale_orders: :environment do
    Order.cancel_stale!
  end

  desc "Anonymize customers who asked to be deleted (GDPR)"
  task anonymize: :environment do
    count = 0
    Customer.where.not(deletion_requested_at: nil).find_each do |customer|
      customer.anonymize!
      count += 1
    end
    puts "anonymized #{count} customers"
  end

  desc "Delete abandoned carts older than 30 days"
  task carts: :environment do
    Cart.where("updated_at < ?", 30.days.ago).in_batches(of: 1000).delete_all
  end
end

# frozen_string_literal: true

# An order placed in the web shop. Orders move through
# pending -> paid -> roasted -> shipped (or cancelled).
class Order < ApplicationRecord
  belongs_to :customer
  has_many :line_items, dependent: :destroy
  belongs_to :coupon, optional: true

  STATES = %w[pending paid roasted shipped cancelled].freeze

  validates :state, inclusion: { in: STATES }
  validates :number, presence: true, uniqueness: true

  scope :stale, -> { where(state: "pending").where("created_at < ?", 3.days.ago) }
  scope :to_roast, -> { where(state: "paid").order(:created_at) }

  # Batch helpers. Always iterate big tables with find_each so that we never
  # load every order into memory; `Order.all.each` is rejected in review.
  def self.cancel_stale!
    stale.find_each do |order|
      order.update!(state: "cancelled")
      OrderMailer.with(order: order).cancelled.deliver_later
    end
  end

  def self.recalculate_totals!
    includes(:line_items).find_each(batch_size: 200) { |order| order.recalculate_total! }
  end

  def recalculate_total!
    subtotal = line_items.sum(&:subtotal_cents)
    discount = coupon ? coupon.discount_for(subtotal) : 0
    update!(total_cents: subtotal - discount)
  end

  def total
    Money.new(total_cents, currency)
  end

  def paid?
    state == "paid"
  end

  def cancellable?
    %w[pending paid].include?(state)
  end
end

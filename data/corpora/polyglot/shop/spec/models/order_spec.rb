# frozen_string_literal: true

require "rails_helper"

RSpec.describe Order do
  describe ".cancel_stale!" do
    it "cancels pending orders older than three days" do
      old = create(:order, state: "pending", created_at: 4.days.ago)
      fresh = create(:order, state: "pending")

      described_class.cancel_stale!

      expect(old.reload.state).to eq("cancelled")
      expect(fresh.reload.state).to eq("pending")
    end

    it "iterates in batches" do
      expect(described_class.stale).to receive(:find_each)
      allow(described_class).to receive(:stale).and_return(described_class.stale)
      described_class.cancel_stale!
    end
  end

  describe "#recalculate_total!" do
    it "subtracts the coupon discount" do
      order = create(:order, :with_items, coupon: create(:coupon, percent: 10))
      order.recalculate_total!
      expect(order.total_cents).to eq(order.line_items.sum(&:subtotal_cents) * 9 / 10)
    end
  end

  describe "#cancellable?" do
    it { expect(build(:order, state: "paid")).to be_cancellable }
    it { expect(build(:order, state: "shipped")).not_to be_cancellable }
  end
end

# frozen_string_literal: true

require "rails_helper"

RSpec.describe CouponsController do
  let(:customer) { create(:customer) }

  before { sign_in customer }

  describe "POST #create" do
    it "applies an active coupon" do
      coupon = create(:coupon, code: "SOMMER10")
      post :create, params: { coupon: "sommer10 " }
      expect(customer.current_cart.reload.coupon).to eq(coupon)
    end

    it "accepts the API field name too" do
      create(:coupon, code: "HERBST5")
      post :create, params: { coupon_code: "HERBST5" }
      expect(response).to redirect_to(cart_path)
    end

    it "rejects unknown codes" do
      post :create, params: { coupon: "NOPE" }
      expect(flash[:alert]).to be_present
    end
  end

  describe "DELETE #destroy" do
    it "removes the coupon" do
      delete :destroy
      expect(customer.current_cart.reload.coupon).to be_nil
    end
  end
end
